package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The console's files as the gateway serves them: every one, with its headers, and nothing they
 * refer to missing. The browser side (what the console does with them) is ConsoleBrowserTest's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("The web console's files are served from the jar with strict headers")
class ConsoleRoutesTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  private HttpResponse<Buffer> get(String path, String ifNoneMatch) {
    var request = gateway.bareClient().get(path);
    if (ifNoneMatch != null) {
      request.putHeader("If-None-Match", ifNoneMatch);
    }
    return request.send().await();
  }

  @Test
  @DisplayName("each file: 200 without a key, its type, a CSP without inline script and no framing, nosniff,"
      + " no referrer, revalidated by its ETag (304 when unchanged)")
  void headers() {
    for (var file : ConsoleRoutes.FILES.entrySet()) {
      HttpResponse<Buffer> r = get(file.getKey(), null);
      String where = file.getKey();
      assertThat(r.statusCode()).as(where).isEqualTo(200);
      String type = r.getHeader("Content-Type");
      if (file.getValue().endsWith(".js")) {
        assertThat(type).as(where).isEqualTo("text/javascript; charset=utf-8");
      } else if (file.getValue().endsWith(".css")) {
        assertThat(type).as(where).isEqualTo("text/css; charset=utf-8");
      } else {
        assertThat(type).as(where).isEqualTo("text/html; charset=utf-8");
      }
      String csp = r.getHeader("Content-Security-Policy");
      assertThat(csp).as(where).contains("script-src 'self'", "frame-ancestors 'none'", "default-src 'none'",
          "base-uri 'none'").doesNotContain("unsafe-inline", "unsafe-eval", "*");
      assertThat(r.getHeader("X-Content-Type-Options")).isEqualTo("nosniff");
      assertThat(r.getHeader("X-Frame-Options")).isEqualTo("DENY");
      assertThat(r.getHeader("Referrer-Policy")).isEqualTo("no-referrer");
      assertThat(r.getHeader("Cache-Control")).isEqualTo("no-cache");
      String etag = r.getHeader("ETag");
      assertThat(etag).as(where).matches("\"[0-9a-f]{24}\"");
      HttpResponse<Buffer> again = get(file.getKey(), etag);
      assertThat(again.statusCode()).as(where).isEqualTo(304);
      assertThat(again.body()).as(where).isNull();
      assertThat(again.getHeader("Content-Security-Policy")).isEqualTo(csp);
      assertThat(get(file.getKey(), "\"other\"").statusCode()).isEqualTo(200);
      HttpResponse<Buffer> head = gateway.bareClient().head(file.getKey()).send().await();
      assertThat(head.statusCode()).as(where).isEqualTo(200);
      assertThat(head.getHeader("Content-Length")).isEqualTo(String.valueOf(r.body().length()));
      assertThat(head.getHeader("Content-Security-Policy")).isEqualTo(csp);
      assertThat(head.body()).isNull();
    }
  }

  @Test
  @DisplayName("only the listed files: a path beside them is 404 (JSON), and no file of console/ is left unserved")
  void onlyTheListedFiles() throws IOException, URISyntaxException {
    assertThat(get("/console/nothing.js", null).statusCode()).isEqualTo(404);
    assertThat(get("/index.html", null).statusCode()).isEqualTo(404);
    Set<String> onDisk = new TreeSet<>();
    try (Stream<Path> files = Files.list(consoleDir())) {
      files.forEach(f -> onDisk.add(f.getFileName().toString()));
    }
    assertThat(new TreeSet<>(ConsoleRoutes.FILES.values())).isEqualTo(onDisk);
  }

  private static final Pattern REFERENCE = Pattern.compile(
      "(?:src|href)=\"(/[^\"]*)\"|from '\\./([^']+)'|import\\('\\./([^']+)'\\)");

  @Test
  @DisplayName("every file the page and its modules refer to is served")
  void referencesResolve() throws IOException, URISyntaxException {
    List<String> missing = new ArrayList<>();
    for (String resource : ConsoleRoutes.FILES.values()) {
      String text = Files.readString(consoleDir().resolve(resource), StandardCharsets.UTF_8);
      Matcher m = REFERENCE.matcher(text);
      while (m.find()) {
        String path = m.group(1) != null ? m.group(1) : "/console/" + (m.group(2) != null ? m.group(2) : m.group(3));
        if (!ConsoleRoutes.FILES.containsKey(path)) {
          missing.add(resource + " -> " + path);
        }
      }
    }
    assertThat(missing).isEmpty();
  }

  @Test
  @DisplayName("no file builds markup from strings or keeps the key past the session: no innerHTML and its kin,"
      + " no inline script or style, no localStorage, no cookie")
  void textOnly() throws IOException, URISyntaxException {
    List<String> found = new ArrayList<>();
    for (String resource : ConsoleRoutes.FILES.values()) {
      String text = Files.readString(consoleDir().resolve(resource), StandardCharsets.UTF_8);
      for (String banned : List.of("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
          "new Function", "localStorage", "document.cookie", "DOMParser", "createContextualFragment", "style=",
          "javascript:")) {
        if (text.contains(banned)) {
          found.add(resource + ": " + banned);
        }
      }
      if (resource.endsWith(".html")) {
        Matcher scripts = Pattern.compile("<script([^>]*)>").matcher(text);
        while (scripts.find()) {
          if (!scripts.group(1).contains("src=")) {
            found.add(resource + ": an inline <script>");
          }
        }
      }
    }
    assertThat(found).isEmpty();
  }

  private static Path consoleDir() throws URISyntaxException {
    return Path.of(ConsoleRoutes.class.getResource("/console/index.html").toURI()).getParent();
  }
}
