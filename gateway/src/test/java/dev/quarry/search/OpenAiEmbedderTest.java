package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Against a real HTTP server speaking the OpenAI embeddings API (scripted answers). */
@DisplayName("OpenAI-compatible embeddings client")
class OpenAiEmbedderTest {
  static Vertx vertx;
  static HttpServer server;
  static final List<JsonObject> requests = new CopyOnWriteArrayList<>();
  static final List<String> authorizations = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body -> {
      if (!req.path().equals("/v1/embeddings")) {
        req.response().setStatusCode(404).end("{\"error\":\"no such path\"}");
        return;
      }
      JsonObject json = body.toJsonObject();
      requests.add(json);
      authorizations.add(String.valueOf(req.getHeader("Authorization")));
      if (json.getString("model").equals("broken")) {
        req.response().setStatusCode(500).end("{\"error\":\"model crashed\"}");
        return;
      }
      JsonArray data = new JsonArray();
      JsonArray input = json.getJsonArray("input");
      // Answer in reverse order: clients must place vectors by index.
      for (int i = input.size() - 1; i >= 0; i--) {
        int len = input.getString(i).length();
        data.add(new JsonObject().put("index", i).put("embedding", new JsonArray(List.of(3.0 * len, 4.0 * len, 0.0))));
      }
      req.response().putHeader("Content-Type", "application/json")
          .end(new JsonObject().put("data", data).encode());
    })).listen(0, "127.0.0.1").await();
  }

  @AfterAll
  static void stop() {
    vertx.close().await();
  }

  static String base() {
    return "http://127.0.0.1:" + server.actualPort() + "/v1/";
  }

  @Test
  @DisplayName("probes dimensions, batches inputs, keeps order, normalises, sends the key")
  void embeds() {
    OpenAiEmbedder e = OpenAiEmbedder.probing(base(), "sk-test", "text-embedding-3-small");
    assertThat(e.dimensions()).isEqualTo(3);
    assertThat(e.modelName()).isEqualTo("text-embedding-3-small");
    requests.clear();
    List<String> texts = new ArrayList<>();
    for (int i = 1; i <= 70; i++) {
      texts.add("x".repeat(i));
    }
    List<float[]> v = e.embedPassages(texts);
    assertThat(v).hasSize(70);
    assertThat(requests).hasSize(2);
    assertThat(requests.get(0).getJsonArray("input")).hasSize(64);
    assertThat(v.get(69)[0]).isCloseTo(0.6f, within(1e-6f));
    assertThat(v.get(69)[1]).isCloseTo(0.8f, within(1e-6f));
    assertThat(authorizations).contains("Bearer sk-test");
    assertThat(e.embedQuery("q")).hasSize(3);
  }

  @Test
  @DisplayName("a failing endpoint gives an error naming it and its status")
  void failures() {
    OpenAiEmbedder broken = new OpenAiEmbedder(base(), "", "broken", 3);
    assertThatThrownBy(() -> broken.embedQuery("q"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("/v1/embeddings")
        .hasMessageContaining("500")
        .hasMessageContaining("model crashed");
    assertThatThrownBy(() -> new OpenAiEmbedder("", "", "m", 3))
        .hasMessageContaining("QUARRY_EMBEDDING_BASE_URL");
  }
}
