package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Accept headers decide whether an answer streams (ingest, executions and analyses share
 * {@link EventStream#accepted}): q-values are honoured, {@code q=0} is "not acceptable".
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Accept: text/event-stream streams only with a q-value above 0")
class EventStreamAcceptTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();
  private final AtomicInteger n = new AtomicInteger();

  record Case(List<String> accept, boolean streams) {
    @Override
    public String toString() {
      return accept + (streams ? " streams" : " answers JSON");
    }
  }

  static List<Case> cases() {
    return List.of(
        new Case(List.of("text/event-stream"), true),
        new Case(List.of("TEXT/Event-Stream"), true),
        new Case(List.of("text/event-stream;q=0.5"), true),
        new Case(List.of("text/event-stream; q=1"), true),
        new Case(List.of("application/json;q=0.9, text/event-stream;q=0.001"), true),
        new Case(List.of("application/json", "text/event-stream;q=0.2"), true),
        new Case(List.of("text/event-stream;q=0"), false),
        new Case(List.of("text/event-stream; q=0.000"), false),
        new Case(List.of("text/event-stream;Q=0.0"), false),
        new Case(List.of("application/json, text/event-stream;q=0"), false),
        new Case(List.of("text/event-stream;q=abc"), false),
        new Case(List.of("text/event-stream;q=2"), false),
        new Case(List.of("text/event-stream;q=-1"), false),
        new Case(List.of("text/*"), false),
        new Case(List.of("*/*"), false),
        new Case(List.of("text/event-streamx"), false),
        new Case(List.of("application/json"), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void accept(Case c) {
    HttpRequest<Buffer> request = gateway.client().post("/v1/documents");
    for (String value : c.accept()) {
      request.headers().add("Accept", value);
    }
    int i = n.incrementAndGet();
    HttpResponse<Buffer> r = request.sendJsonObject(new JsonObject().put("uri", "accept-" + i + ".md")
        .put("content_type", "text/markdown").put("content", "# Accept " + i + "\n\nText number " + i + ".\n")).await();
    if (c.streams()) {
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.getHeader("Content-Type")).startsWith("text/event-stream");
      assertThat(r.bodyAsString()).contains("event: result");
    } else {
      assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(201);
      assertThat(r.getHeader("Content-Type")).startsWith("application/json");
    }
  }
}
