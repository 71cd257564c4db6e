package dev.quarry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.quarry.api.TestGateway;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The example corpus, ingested once through the CLI, then explored with the other commands. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("quarry search, documents, toc, items and delete, over the example corpus")
class CliCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private TestGateway gateway;
  private CliRun ingest;

  /** Tests run in the gateway module; the corpus lives at the project root. */
  static Path corpus() {
    Path here = Path.of("").toAbsolutePath();
    Path corpus = here.resolve("examples/corpus");
    return Files.isDirectory(corpus) ? corpus : here.getParent().resolve("examples/corpus");
  }

  @BeforeAll
  void start() throws Exception {
    gateway = TestGateway.start();
    ingest = CliRun.of("ingest", "--no-progress", "--url", gateway.url(), "--api-key", gateway.apiKey(), corpus().toString());
  }

  @AfterAll
  void stop() throws Exception {
    gateway.close();
  }

  String idOf(String uriSuffix) throws Exception {
    JsonNode documents = JSON.readTree(CliRun.of("documents", "--json", "--url", gateway.url(), "--api-key", gateway.apiKey()).out());
    for (JsonNode d : documents.path("documents")) {
      if (d.path("uri").asText().endsWith(uriSuffix)) {
        return d.path("id").asText();
      }
    }
    throw new AssertionError("no document " + uriSuffix);
  }

  @Test
  @DisplayName("every document of the example corpus, in all five formats, ingests cleanly")
  void corpusIngests() {
    assertThat(ingest.exitCode()).as(ingest.err()).isZero();
    assertThat(ingest.out()).contains("5 ingested").contains("0 failed");
    for (String type : new String[] {"pdf", "docx", "html", "markdown", "text"}) {
      assertThat(ingest.out()).contains("(" + type + ",");
    }
  }

  @Test
  @DisplayName("search answers a table question with the table, its title and its page")
  void tableQuestion() {
    CliRun run = CliRun.of("search", "--url", gateway.url(), "--api-key", gateway.apiKey(), "--limit", "3",
        "passengers", "on", "the", "Skerry", "Point", "route", "in", "the", "third", "quarter");
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out()).contains(" 1. [").contains("Annual Report 2024").contains("(p. 1)").contains("61,905");
  }

  @Test
  @DisplayName("search --json prints the gateway's response, hits with the contract's keys")
  void searchJson() throws Exception {
    CliRun run = CliRun.of("search", "--json", "--url", gateway.url(), "--api-key", gateway.apiKey(), "--limit", "2", "what", "to", "do",
        "when", "someone", "falls", "into", "the", "sea");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode results = JSON.readTree(run.out()).path("results");
    assertThat(results.size()).isBetween(1, 2);
    assertThat(results.get(0).path("document_title").asText()).isEqualTo("Safety and Emergency Procedures");
    assertThat(results.get(0).path("content").asText()).contains("lifebuoy");
  }

  @Test
  @DisplayName("search with a bad limit exits non-zero with the gateway's error naming the field")
  void searchBadLimit() {
    CliRun run = CliRun.of("search", "--url", gateway.url(), "--api-key", gateway.apiKey(), "--limit", "0", "ferries");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err().strip()).startsWith("error: invalid_limit: 'limit' must be between 1 and");
  }

  @Test
  @DisplayName("documents lists the corpus with ids, types and counts")
  void documents() {
    CliRun run = CliRun.of("documents", "--url", gateway.url(), "--api-key", gateway.apiKey());
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("Fleet Handbook").contains("corpus/timetable-winter-2025.html")
        .contains("docx").contains("pdf");
  }

  @Test
  @DisplayName("toc shows a document's sections and items shows its items in reading order")
  void tocAndItems() throws Exception {
    String id = idOf("corpus/fleet-handbook.md");
    CliRun toc = CliRun.of("toc", "--url", gateway.url(), "--api-key", gateway.apiKey(), id);
    assertThat(toc.exitCode()).as(toc.err()).isZero();
    assertThat(toc.out()).contains("The fleet").contains("Maintenance cycle").contains("[items ");

    CliRun items = CliRun.of("items", "--url", gateway.url(), "--api-key", gateway.apiKey(), "--limit", "3", id);
    assertThat(items.exitCode()).isZero();
    assertThat(items.out()).contains("   0  title").contains("   2  ").doesNotContain("   3  ");
  }

  @Test
  @DisplayName("delete removes a document; deleting a malformed id fails naming it")
  void delete() throws Exception {
    String id = idOf("corpus/service-notice-2025-11.txt");
    CliRun deleted = CliRun.of("delete", "--url", gateway.url(), "--api-key", gateway.apiKey(), id);
    assertThat(deleted.exitCode()).isZero();
    assertThat(deleted.out()).contains("deleted " + id);
    assertThat(CliRun.of("documents", "--url", gateway.url(), "--api-key", gateway.apiKey()).out()).doesNotContain(id);
    // Put it back, so the order of tests does not matter to the others.
    assertThat(CliRun.of("ingest", "--url", gateway.url(), "--api-key", gateway.apiKey(), corpus().resolve("service-notice-2025-11.txt").toString())
        .exitCode()).isZero();

    CliRun bad = CliRun.of("delete", "--url", gateway.url(), "--api-key", gateway.apiKey(), "12345");
    assertThat(bad.exitCode()).isEqualTo(1);
    assertThat(bad.err()).contains("invalid_id").contains("'12345'");
  }
}
