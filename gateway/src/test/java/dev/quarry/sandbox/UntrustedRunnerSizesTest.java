package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * R5-2: the runner's stream is untrusted. Code that escaped the language can send results and
 * callbacks of any size as the runner (the hostile runner does it here, over the real socket and
 * protocol); the gateway applies every size limit again on what arrives.
 */
@DisplayName("The gateway applies the size limits again to what the runner sends")
class UntrustedRunnerSizesTest {
  /** The runner's own marker and limits (OutputCapture.marker, executor.MAX_ERROR_CHARS, MAX_CALLBACK_ARGUMENT_CHARS). */
  static final String MARKER_100 = "\n[output truncated: over the limit of 100 characters]\n";
  static final int MAX_ERROR_CHARS = 8_000;
  static final int MAX_ERROR_TYPE_CHARS = 100;
  static final int MAX_CALLBACK_ARGUMENT_CHARS = 1_000_000;

  @TempDir static Path tmp;
  static SessionFixture sf;

  /** Callbacks that remember what reached them. */
  static final class Recording implements Callbacks {
    final List<Integer> prompts = new CopyOnWriteArrayList<>();
    final List<Integer> queries = new CopyOnWriteArrayList<>();

    @Override
    public Future<JsonArray> search(String query, int limit) {
      queries.add(query.length());
      return Future.succeededFuture(new JsonArray());
    }

    @Override
    public Future<JsonArray> listDocuments() {
      return Future.succeededFuture(new JsonArray());
    }

    @Override
    public Future<String> llm(String prompt) {
      prompts.add(prompt.length());
      return Future.succeededFuture("fine");
    }
  }

  @BeforeAll
  static void start() throws Exception {
    sf = new SessionFixture(tmp, HostileRunner.ensure(), 4, Duration.ofSeconds(30),
        SandboxSettings.Fairness.DEFAULTS);
  }

  @AfterAll
  static void stop() throws Exception {
    sf.close();
  }

  /** Runs one directive in a fresh session; returns its outcome and what the listener heard. */
  static CellOutcome run(String code, long maxOutputChars, Callbacks callbacks, StringBuilder heard)
      throws Exception {
    SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, callbacks));
    try {
      return await(s.execute(code, new CellOptions(20_000, maxOutputChars, List.of()), new CellListener() {
        @Override
        public void output(CellListener.Stream stream, String text) {
          synchronized (heard) {
            heard.append(text);
          }
        }
      }));
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("a forged result's value is cut to max_output_chars with the marker; its error fields and duration are bounded")
  void forgedValueAndErrors() throws Exception {
    StringBuilder heard = new StringBuilder();
    long started = System.nanoTime();
    CellOutcome out = run("#forge 3000000 0", 100, new Recording(), heard);
    long elapsedMs = (System.nanoTime() - started) / 1_000_000;

    assertThat(out.stdout()).isEqualTo("v".repeat(100) + MARKER_100);
    assertThat(heard.toString()).as("what the listener (stream, events) got").isEqualTo(out.stdout());
    assertThat(out.truncated()).isTrue();
    assertThat(out.status()).isEqualTo(CellOutcome.Status.ERROR);
    assertThat(out.error().type()).hasSizeLessThan(MAX_ERROR_TYPE_CHARS + 40)
        .startsWith("TTTT").endsWith(" more characters]");
    assertThat(out.error().message()).hasSizeLessThan(MAX_ERROR_CHARS + 40)
        .endsWith("... [" + (3_000_000 - MAX_ERROR_CHARS) + " more characters]");
    assertThat(out.error().traceback()).hasSizeLessThan(MAX_ERROR_CHARS + 40);
    assertThat(out.durationMs()).as("the forged day").isBetween(0L, elapsedMs);
    assertThat(out.toToolResult().encode().length()).as("what the model would get").isLessThan(20_000);
  }

  @Test
  @DisplayName("forged output past max_output_chars is cut with the marker, and nothing after it is kept")
  void forgedOutput() throws Exception {
    StringBuilder heard = new StringBuilder();
    CellOutcome out = run("#forge 10 3000000", 100, new Recording(), heard);

    assertThat(out.stdout()).isEqualTo("o".repeat(100) + MARKER_100);
    assertThat(heard.toString()).isEqualTo(out.stdout());
    assertThat(out.truncated()).isTrue();
  }

  @Test
  @DisplayName("the limits count characters as the runner does (code points): text the runner kept is never cut again")
  void countsCharactersAsTheRunner() throws Exception {
    StringBuilder heard = new StringBuilder();
    // 100 characters outside the BMP (200 UTF-16 units), as a runner that keeps the limit may send them.
    CellOutcome out = run("#echo " + "\uD83D\uDE00".repeat(100), 100, new Recording(), heard);
    assertThat(out.stdout()).isEqualTo("\uD83D\uDE00".repeat(100));
    assertThat(out.truncated()).isFalse();
    CellOutcome over = run("#echo " + "\uD83D\uDE00".repeat(101 + MARKER_100.length()), 100, new Recording(), heard);
    assertThat(over.stdout()).isEqualTo("\uD83D\uDE00".repeat(100) + MARKER_100);
    assertThat(over.truncated()).isTrue();
  }

  @Test
  @DisplayName("llm() and search() arguments over the runner's limit are refused before they reach the callbacks")
  void oversizedCallbackArguments() throws Exception {
    Recording callbacks = new Recording();
    StringBuilder heard = new StringBuilder();
    CellOutcome llm = run("#bigcall 1500000 llm", 10_000, callbacks, heard);
    CellOutcome search = run("#bigcall 1500000 search", 10_000, callbacks, heard);
    CellOutcome fits = run("#bigcall 500000 llm", 10_000, callbacks, heard);

    assertThat(llm.stdout()).isEqualTo("llm=ValueError: llm(): arguments of 1500014 characters are over the "
        + MAX_CALLBACK_ARGUMENT_CHARS + " limit\n");
    assertThat(search.stdout()).startsWith("search=ValueError: search(): arguments of ");
    assertThat(fits.stdout()).isEqualTo("llm=ok: 6 characters\n");
    assertThat(callbacks.prompts).as("prompts that reached the model").containsExactly(500_000);
    assertThat(callbacks.queries).as("queries that reached search").isEmpty();
  }
}
