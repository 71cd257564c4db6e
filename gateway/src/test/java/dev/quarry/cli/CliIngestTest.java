package dev.quarry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.BadInputs;
import dev.quarry.api.BadInputs.BadInput;
import dev.quarry.api.TestGateway;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("quarry ingest")
class CliIngestTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  static Stream<BadInput> badFiles() throws Exception {
    return BadInputs.all().stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badFiles")
  @DisplayName("a bad file exits non-zero with one error line naming the file and the reason, and stores nothing")
  void badFile(BadInput input, @TempDir Path dir) throws IOException {
    long before = gateway.count("documents");
    long chunksBefore = gateway.count("chunks");
    Path file = Files.write(dir.resolve(input.fileName()), input.bytes());
    CliRun run = CliRun.of("ingest", "--url", gateway.url(), "--api-key", gateway.apiKey(), file.toString());
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err().lines().filter(l -> l.startsWith("FAILED")))
        .singleElement()
        .satisfies(line -> assertThat(line).startsWith("FAILED    " + input.fileName() + ": " + input.code() + ": "));
    assertThat(run.out()).contains("0 ingested").contains("1 failed");
    assertThat(gateway.count("documents")).isEqualTo(before);
    assertThat(gateway.count("chunks")).isEqualTo(chunksBefore);
  }

  @Test
  @DisplayName("a folder is ingested recursively; good files are stored, bad ones reported, and the exit code says some failed")
  void folderWithGoodAndBad(@TempDir Path dir) throws IOException {
    Path folder = Files.createDirectories(dir.resolve("harbour").resolve("notes"));
    Files.writeString(folder.resolve("berths.md"), "# Berths\n\nBerth 3 takes vessels up to 70 metres.\n");
    Files.writeString(folder.getParent().resolve("tides.txt"), "High water at the east quay is 40 minutes after Port Halvard.\n");
    Files.write(folder.resolve("empty.txt"), new byte[0]);
    Files.writeString(folder.resolve(".hidden.md"), "# Not for upload\n");
    long before = gateway.count("documents");

    CliRun run = CliRun.of("ingest", "--url", gateway.url(), "--api-key", gateway.apiKey(), dir.resolve("harbour").toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).contains("created   harbour/notes/berths.md").contains("created   harbour/tides.txt")
        .contains("2 ingested").contains("1 failed");
    assertThat(run.err()).contains("FAILED    harbour/notes/empty.txt: empty: empty.txt: ");
    assertThat(run.out() + run.err()).doesNotContain(".hidden.md");
    assertThat(gateway.count("documents")).isEqualTo(before + 2);

    // The same folder again: the same uris with the same bytes (a file named on its own has its file
    // name as its uri, another document's identity, so it would be a document of its own).
    CliRun again = CliRun.of("ingest", "--url", gateway.url(), "--api-key", gateway.apiKey(), dir.resolve("harbour").toString());
    assertThat(again.exitCode()).isEqualTo(1);
    assertThat(again.out()).contains("unchanged").contains("2 ingested (0 new or replaced, 2 unchanged), 1 failed");
    assertThat(gateway.count("documents")).isEqualTo(before + 2);
  }

  @Test
  @DisplayName("more files than a handful are uploaded two at a time and all reported, in the order given")
  void manyFiles(@TempDir Path dir) throws IOException {
    for (int i = 1; i <= 6; i++) {
      Files.writeString(dir.resolve("crossing-" + i + ".md"),
          "# Crossing " + i + "\n\nCrossing number " + i + " carried " + (i * 37) + " passengers.\n",
          StandardCharsets.UTF_8);
    }
    CliRun run = CliRun.of("ingest", "--no-progress", "--url", gateway.url(), "--api-key", gateway.apiKey(), dir.toString());
    assertThat(run.exitCode()).as(run.err()).isZero();
    var lines = run.out().lines().filter(l -> l.startsWith("created")).toList();
    assertThat(lines).hasSize(6);
    for (int i = 0; i < 6; i++) {
      assertThat(lines.get(i)).contains("crossing-" + (i + 1) + ".md");
    }
  }

  @Test
  @DisplayName("a path that does not exist is reported as a failure naming the path")
  void missingPath(@TempDir Path dir) {
    CliRun run = CliRun.of("ingest", "--url", gateway.url(), "--api-key", gateway.apiKey(), dir.resolve("nope.pdf").toString());
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).contains("nope.pdf: no such file or directory");
  }

  @Test
  @DisplayName("when no gateway runs at the URL, one line says so and how to start it")
  void gatewayNotRunning(@TempDir Path dir) throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path file = Files.writeString(dir.resolve("a.md"), "# A\n\ntext\n");
    CliRun run = CliRun.of("ingest", "--url", "http://localhost:" + port, "--api-key", "any", file.toString());
    assertThat(run.exitCode()).isEqualTo(Main.UNREACHABLE);
    assertThat(run.err().lines().toList()).singleElement().satisfies(line -> assertThat(line)
        .contains("isn't running at http://localhost:" + port).contains("./quarry serve"));
  }

  @Test
  @DisplayName("the CLI's upload hands on the gateway's progress, then returns the stored document;"
      + " an error event after conversion is thrown like an error status")
  void uploadWithProgress(@TempDir Path dir) throws IOException {
    StringBuilder md = new StringBuilder("# Dredging log\n\n");
    for (int i = 1; i <= 45; i++) {
      md.append("## Day ").append(i).append("\n\n")
          .append(("On day " + i + " the dredger cleared the channel by the north mole. ").repeat(20)).append("\n\n");
    }
    Path file = Files.writeString(dir.resolve("dredging.md"), md);
    GatewayClient client = new GatewayClient(gateway.url(), gateway.createTenant("cli-progress").apiKey());
    java.util.List<String> events = new java.util.ArrayList<>();
    java.util.List<Integer> embedded = new java.util.ArrayList<>();
    var result = client.upload(file, "logs/dredging.md", (event, data) -> {
      events.add(event);
      if (event.equals("embedded")) {
        embedded.add(data.path("chunks_embedded").asInt());
      }
    });
    int chunks = result.path("chunk_count").asInt();
    assertThat(result.path("status").asText()).isEqualTo("created");
    assertThat(chunks).isGreaterThan(32);
    assertThat(events.get(0)).isEqualTo("converted");
    assertThat(events.subList(1, events.size())).containsOnly("embedded");
    assertThat(embedded).isSorted().last().isEqualTo(chunks);

    var quotas = gateway.createTenant("cli-progress-quota");
    assertThat(gateway.admin().put("/v1/admin/tenants/" + quotas.id() + "/quotas")
        .sendJsonObject(new io.vertx.core.json.JsonObject().put("stored_bytes", 1000)).await().statusCode())
        .isEqualTo(200);
    GatewayClient limited = new GatewayClient(gateway.url(), quotas.apiKey());
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> limited.upload(file, "logs/dredging.md", (e, d) -> {})))
        .isInstanceOfSatisfying(GatewayClient.GatewayError.class, e -> {
          assertThat(e.code()).isEqualTo("quota_exceeded");
          assertThat(e.getMessage()).contains("1000");
        });
  }
}
