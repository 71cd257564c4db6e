package dev.quarry.console;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AgentHarness;
import dev.quarry.agent.ScriptedModelServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser (Debian's chromium, headless, through chromedriver) against
 * the real gateway: PostgreSQL, sandboxes on the engine, the scripted model over HTTP. It walks
 * what a person does: sign in, upload, search and follow a hit, ask and watch the steps come,
 * replay, open a past analysis, sign out; and it feeds the console hostile text and checks that
 * none of it runs. The screenshots in docs/screenshots come from this run.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DisplayName("The web console, driven in headless Chromium")
class ConsoleBrowserTest {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  private static final Duration WAIT = Duration.ofSeconds(90);
  /** Hostile text: if any of it ran, window.__pwned would be set (or an alert would be open). */
  private static final String PAYLOAD = "<script>window.__pwned='script'</script>"
      + "<img src=x onerror=\"window.__pwned='img';alert(1)\">";

  static AgentHarness h;
  static ChromeDriver browser;
  static WebDriverWait wait;
  static Path notes;
  static Path screenshots;

  @BeforeAll
  static void start() throws IOException {
    assertThat(CHROMIUM).as("Debian's chromium (./quarry setup installs it)").isExecutable();
    assertThat(CHROMEDRIVER).as("Debian's chromium-driver (./quarry setup installs it)").isExecutable();
    h = new AgentHarness(false);
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toString());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
        "--lang=en-GB");
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
    browser = new ChromeDriver(service, options);
    wait = new WebDriverWait(browser, WAIT);
    wait.ignoring(StaleElementReferenceException.class); // a view re-rendered between a look and a read
    notes = Files.createTempDirectory("console-test").resolve("ferry-notes.md");
    Files.writeString(notes, """
        # Ferry notes

        ## Passengers

        The Skerry Point route carried 41,250 passengers in the third quarter.

        | Route | Q3 passengers |
        |---|---|
        | Skerry Point | 41,250 |
        | Gull Harbour | 18,900 |

        ## Safety

        Crew muster at the car deck for fire drills every Monday morning.
        """);
    screenshots = repoRoot().resolve("docs/screenshots");
    Files.createDirectories(screenshots);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (browser != null) {
        browser.quit();
      }
    } finally {
      if (notes != null) {
        Files.deleteIfExists(notes);
        Files.deleteIfExists(notes.getParent());
      }
      if (h != null) {
        h.close();
      }
    }
  }

  @Test
  @Order(1)
  @DisplayName("sign in: a wrong key is refused with the gateway's reason; the right one is kept in session storage only")
  void signIn() {
    browser.get(h.gateway.url() + "/");
    WebElement key = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("api-key")));
    assertThat(browser.findElement(By.id("nav")).isDisplayed()).isFalse();
    key.sendKeys("qk_000000000000_not-a-key-at-all-not-a-key-at-all-not-a-k");
    browser.findElement(By.id("sign-in")).click();
    WebElement problem = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".sign-in [role=alert]")));
    assertThat(problem.getText()).contains("unauthorized").contains("not valid");
    screenshot("sign-in");
    // By keyboard alone: the key field has the focus, Tab reaches the button, Enter signs in.
    assertThat(browser.switchTo().activeElement().getDomAttribute("id")).isEqualTo("api-key");
    key.clear();
    key.sendKeys(h.gateway.apiKey());
    key.sendKeys(Keys.TAB);
    assertThat(browser.switchTo().activeElement().getDomAttribute("id")).isEqualTo("sign-in");
    browser.switchTo().activeElement().sendKeys(Keys.ENTER);
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("nav")));
    // A view's title takes the focus, so a screen reader starts there.
    wait.until(d -> "H1".equals(d.switchTo().activeElement().getTagName().toUpperCase()));
    assertThat(js("return sessionStorage.getItem('quarry.apiKey')")).isEqualTo(h.gateway.apiKey());
    assertThat(js("return localStorage.length")).isEqualTo(0L);
    assertThat(js("return document.cookie")).isEqualTo("");
    assertThat(browser.getCurrentUrl()).doesNotContain(h.gateway.apiKey());
  }

  @Test
  @Order(2)
  @DisplayName("documents: a file chosen for upload shows its progress to the end and is listed; its view shows"
      + " the section tree, labels, and the table as a table")
  void uploadAndView() {
    go("#/documents");
    browser.findElement(By.id("upload-files")).sendKeys(notes.toString());
    WebElement upload = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".upload.done")));
    assertThat(upload.getText()).contains("ferry-notes.md").contains("created");
    assertThat(upload.findElement(By.tagName("progress")).getDomAttribute("value")).isEqualTo("100");
    WebElement link = wait.until(ExpectedConditions.visibilityOfElementLocated(
        By.xpath("//table[contains(@class,'documents')]//a[. = 'Ferry notes']")));
    // Dropped files (a drop as the page gets it from the system: a DataTransfer holding files).
    js("""
        const transfer = new DataTransfer();
        transfer.items.add(new File(['# Lighthouse log\\n\\nThe keeper lit the lamp at dusk.\\n'], 'lighthouse.md'));
        transfer.items.add(new File(['Buoy B7 was repainted in March.\\n'], 'buoys.txt', {type: 'text/plain'}));
        document.querySelector('.drop-zone').dispatchEvent(
            new DragEvent('drop', {dataTransfer: transfer, bubbles: true, cancelable: true}));
        """);
    wait.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector(".upload.done"), 3));
    assertThat(browser.findElements(By.cssSelector(".upload-name")).stream().map(WebElement::getText))
        .containsExactly("ferry-notes.md", "lighthouse.md", "buoys.txt");
    wait.until(ExpectedConditions.visibilityOfElementLocated(
        By.xpath("//table[contains(@class,'documents')]//a[. = 'Lighthouse log']")));
    screenshot("documents");
    // A page at a time (two documents a page here): the third is on the next page, and back.
    go("#/documents?limit=2");
    wait.until(d -> titles().equals(List.of("Ferry notes", "Lighthouse log")));
    browser.findElement(By.xpath("//button[. = 'Next page']")).click();
    wait.until(d -> titles().equals(List.of("Buoy B7 was repainted in March.")));
    assertThat(browser.findElement(By.cssSelector(".documents caption")).getText()).endsWith("page 2");
    assertThat(browser.findElement(By.xpath("//button[. = 'Next page']")).isEnabled()).isFalse();
    browser.findElement(By.xpath("//button[. = 'Previous page']")).click();
    wait.until(d -> titles().equals(List.of("Ferry notes", "Lighthouse log")));
    // Delete asks once more, then the document is gone from the gateway and the list.
    go("#/documents");
    wait.until(d -> titles().size() == 3);
    wait.until(ExpectedConditions.elementToBeClickable(By.cssSelector("button[aria-label='Delete Buoy B7 was repainted in March.']")))
        .click();
    wait.until(ExpectedConditions.elementToBeClickable(By.cssSelector("button.confirm-delete"))).click();
    wait.until(d -> !titles().contains("Buoy B7 was repainted in March.") && titles().contains("Ferry notes"));
    assertThat(h.gateway.client().get("/v1/documents").send().await().bodyAsString()).doesNotContain("buoys.txt");
    link = browser.findElement(By.xpath("//table[contains(@class,'documents')]//a[. = 'Ferry notes']"));
    link.click();
    WebElement table = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".items table")));
    assertThat(table.findElements(By.cssSelector("thead th")).stream().map(WebElement::getText))
        .containsExactly("Route", "Q3 passengers");
    assertThat(table.findElements(By.cssSelector("tbody td")).stream().map(WebElement::getText))
        .contains("Gull Harbour", "18,900");
    assertThat(browser.findElements(By.cssSelector(".toc a")).stream().map(WebElement::getText))
        .anySatisfy(t -> assertThat(t).contains("Safety"));
    assertThat(browser.findElements(By.cssSelector(".item .label")).stream().map(WebElement::getText))
        .contains("SECTION_HEADER", "TABLE");
    screenshot("document");
  }

  @Test
  @Order(3)
  @DisplayName("search: hits show their context and section path, and a hit opens the document at its item")
  void searchAndFollow() {
    String query = "fire drills on the car deck";
    JsonObject first = h.gateway.client().post("/v1/search").sendJsonObject(new JsonObject().put("query", query))
        .await().bodyAsJsonObject().getJsonArray("results").getJsonObject(0);
    go("#/search");
    WebElement input = wait.until(ExpectedConditions.elementToBeClickable(By.id("search-query")));
    input.sendKeys(query);
    input.submit();
    WebElement hit = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".hit")));
    assertThat(hit.findElement(By.cssSelector(".context")).getText()).contains("fire drills");
    assertThat(hit.findElement(By.cssSelector(".headings")).getText()).contains("Safety");
    screenshot("search");
    hit.findElement(By.cssSelector("a.hit-link")).click();
    WebElement target = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".item.target")));
    assertThat(target.getDomAttribute("data-ref")).isEqualTo(first.getJsonArray("doc_item_refs").getString(0));
    assertThat(browser.switchTo().activeElement()).isEqualTo(target);
  }

  @Test
  @Order(4)
  @DisplayName("ask: the step's code, callback and output show while the analysis still runs; then the answer with a"
      + " citation, and the program replayed: first recorded, then matching")
  void askStreamsAndReplays() {
    String code = "hits = await search('Skerry Point passengers', limit=2)\nprint(len(hits) > 0, hits[0]['document_title'])";
    ScriptedModelServer.Held second = new ScriptedModelServer.Held();
    h.model.then(execute(code), second);
    go("#/ask");
    WebElement question = wait.until(ExpectedConditions.elementToBeClickable(By.id("question")));
    question.sendKeys("How many passengers did Skerry Point carry in Q3?");
    browser.findElement(By.id("ask")).click();
    WebElement step = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".step.ok")));
    // The model has not answered yet (its reply is held): what shows came from the live stream.
    assertThat(second.asked()).succeedsWithin(WAIT);
    assertThat(browser.findElement(By.id("analysis-status")).getText()).isEqualTo("running");
    assertThat(step.findElement(By.cssSelector(".code")).getText()).contains("await search('Skerry Point passengers'");
    assertThat(step.findElements(By.cssSelector(".code .tok-keyword")).stream().map(WebElement::getText)).contains("await");
    assertThat(step.findElement(By.cssSelector(".callbacks")).getText()).contains("search").contains("Skerry Point");
    assertThat(step.findElement(By.cssSelector(".output")).getText()).contains("True");
    assertThat(step.findElement(By.cssSelector(".step-result")).getText()).matches("succeeded in \\d+ ms");
    assertThat(browser.findElement(By.id("analysis-tokens")).getText()).startsWith("tokens 120");
    String program = "hits = await search('Skerry Point passengers', limit=2)\nprint(hits[0]['document_title'])";
    second.reply().complete(answer("41,250 passengers (ferry-notes.md, Passengers).", program));
    WebElement answerText = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".answer-text")));
    assertThat(answerText.getText()).isEqualTo("41,250 passengers (ferry-notes.md, Passengers).");
    assertThat(browser.findElement(By.id("analysis-status")).getText()).isEqualTo("succeeded");
    WebElement citation = browser.findElement(By.cssSelector("a.citation"));
    assertThat(citation.getText()).isEqualTo("Ferry notes");
    assertThat(browser.getCurrentUrl()).contains("#/analyses/");
    screenshot("ask");
    browser.findElement(By.id("replay")).click();
    assertThat(wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".verdict"))).getText())
        .contains("recorded");
    browser.findElement(By.id("replay")).click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".verdict.match")));
    assertThat(browser.findElement(By.cssSelector(".replay .output")).getText()).isEqualTo("Ferry notes");
    screenshot("replay");
    // A cited passage opens the document with the items its chunk came from marked.
    WebElement passage = browser.findElement(By.cssSelector("a.citation-passage"));
    String chunk = passage.getDomAttribute("href").replaceAll(".*[?&]chunk=([0-9a-f-]+).*", "$1");
    String documentId = passage.getDomAttribute("href").replaceAll("^#/documents/([0-9a-f-]+).*", "$1");
    JsonArray refs = h.gateway.client().get("/v1/documents/" + documentId + "/chunks/" + chunk).send().await()
        .bodyAsJsonObject().getJsonArray("doc_item_refs");
    passage.click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("h1"), "Ferry notes"));
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".item.target")));
    assertThat(browser.findElements(By.cssSelector(".item.target")).stream().map(e -> e.getDomAttribute("data-ref")))
        .isEqualTo(refs.getList());
  }

  @Test
  @Order(5)
  @DisplayName("past analyses are listed and open from their stored events; a failure shows its type and message")
  void pastAnalysesAndFailures() {
    h.model.then(ScriptedModelServer.status(400));
    go("#/ask");
    wait.until(ExpectedConditions.elementToBeClickable(By.id("question"))).sendKeys("A question the model refuses");
    browser.findElement(By.id("ask")).click();
    WebElement failure = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".failure")));
    assertThat(failure.findElement(By.cssSelector(".error-type")).getText()).isEqualTo("ModelRejected");
    assertThat(failure.getText()).contains("refused").doesNotContain("at dev.quarry").doesNotContain("\tat ");
    go("#/analyses");
    WebElement row = wait.until(ExpectedConditions.visibilityOfElementLocated(
        By.xpath("//table[contains(@class,'analyses')]//a[contains(., 'Skerry Point')]")));
    assertThat(browser.findElement(By.xpath("//table[contains(@class,'analyses')]//tr[.//a[contains(., 'refuses')]]"))
        .getText()).contains("failed").contains("ModelRejected");
    screenshot("analyses");
    row.click();
    WebElement answerText = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".answer-text")));
    assertThat(answerText.getText()).startsWith("41,250 passengers");
    assertThat(browser.findElements(By.cssSelector(".step"))).hasSize(1);
  }

  @Test
  @Order(6)
  @DisplayName("hostile text in a document, a search hit, model output and an answer is shown as text and never runs")
  void hostileTextIsInert() {
    JsonObject ingested = h.gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
            .put("title", "Hostile " + PAYLOAD).put("uri", "hostile.txt").put("content_type", "text/plain")
            .put("content", "Harbour dues notice. " + PAYLOAD + " Pay the harbour dues at the quay office."))
        .await().bodyAsJsonObject();
    String id = ingested.getString("id");
    go("#/documents/" + id);
    WebElement item = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".item .text")));
    assertThat(item.getText()).contains("<script>window.__pwned='script'</script>").contains("onerror=");
    assertThat(browser.findElement(By.tagName("h1")).getText()).contains("<img src=x");

    go("#/search");
    WebElement input = wait.until(ExpectedConditions.elementToBeClickable(By.id("search-query")));
    input.clear();
    input.sendKeys("harbour dues quay office");
    input.submit();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(".hit .context"), "<script>"));

    h.model.then(execute("print(\"" + PAYLOAD.replace("\"", "\\\"") + "\")"), answer("Dues: " + PAYLOAD, "print('" + "<b>x</b>" + "')"));
    go("#/ask");
    wait.until(ExpectedConditions.elementToBeClickable(By.id("question"))).sendKeys("What about " + PAYLOAD + "?");
    browser.findElement(By.id("ask")).click();
    WebElement answerText = wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".answer-text")));
    assertThat(answerText.getText()).isEqualTo("Dues: " + PAYLOAD);
    assertThat(browser.findElement(By.cssSelector(".step .output")).getText()).contains("<img src=x onerror=");
    assertThat(browser.findElement(By.cssSelector(".question")).getText()).contains("<script>");

    assertThat(js("return typeof window.__pwned")).isEqualTo("undefined");
    assertThat(browser.findElements(By.cssSelector("main img, main script, main b"))).isEmpty();
    try {
      browser.switchTo().alert();
      throw new AssertionError("an alert is open: hostile text ran");
    } catch (NoAlertPresentException expected) {
      // nothing ran
    }
    assertThat(cspViolations()).isEmpty();
  }

  @Test
  @Order(7)
  @DisplayName("on a phone's width nothing overflows sideways, and the analysis still reads")
  void phoneWidth() {
    JsonArray analyses = h.gateway.client().get("/v1/analyses?limit=50").send().await().bodyAsJsonObject()
        .getJsonArray("analyses");
    String answered = analyses.stream().map(o -> (JsonObject) o).filter(a -> a.getString("question").contains("Skerry"))
        .findFirst().orElseThrow().getString("id");
    browser.manage().window().setSize(new Dimension(390, 1200));
    try {
      go("#/analyses/" + answered);
      wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".answer-text")));
      assertThat((Long) js("return document.documentElement.scrollWidth - window.innerWidth")).isLessThanOrEqualTo(0L);
      screenshot("phone-analysis");
    } finally {
      browser.manage().window().setSize(new Dimension(1280, 1000));
    }
  }

  @Test
  @Order(8)
  @DisplayName("sign out: the key leaves session storage and every view asks for a key again")
  void signOut() {
    go("#/documents");
    wait.until(ExpectedConditions.elementToBeClickable(By.id("sign-out"))).click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("api-key")));
    assertThat(js("return sessionStorage.getItem('quarry.apiKey')")).isNull();
    goSignedOut("#/search");
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("api-key")));
    assertThat(browser.findElements(By.id("search-query"))).isEmpty();
  }

  private static List<String> titles() {
    return browser.findElements(By.cssSelector("table.documents tbody td:first-child a")).stream()
        .map(WebElement::getText).toList();
  }

  private static void signInAs(String key) {
    WebElement input = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("api-key")));
    input.clear();
    input.sendKeys(key);
    browser.findElement(By.id("sign-in")).click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("nav")));
  }

  /** Goes to a view of the console; signs in first when the tab has no key (a test run alone). */
  private static void go(String fragment) {
    if (!browser.getCurrentUrl().startsWith(h.gateway.url())) {
      browser.get(h.gateway.url() + "/");
    }
    if (js("return sessionStorage.getItem('quarry.apiKey')") == null) {
      signInAs(h.gateway.apiKey());
    }
    goSignedOut(fragment);
  }

  private static void goSignedOut(String fragment) {
    js("location.hash = arguments[0]", fragment);
  }

  private static Object js(String script, Object... args) {
    return ((JavascriptExecutor) browser).executeScript(script, args);
  }

  private static List<String> cspViolations() {
    return browser.manage().logs().get(LogType.BROWSER).getAll().stream().map(LogEntry::getMessage)
        .filter(m -> m.contains("Content Security Policy")).toList();
  }

  private static void screenshot(String name) {
    try {
      Files.write(screenshots.resolve(name + ".png"), ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Path repoRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isRegularFile(dir.resolve("quarry"))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException("cannot find the repository root above " + Path.of("").toAbsolutePath());
    }
    return dir;
  }

}
