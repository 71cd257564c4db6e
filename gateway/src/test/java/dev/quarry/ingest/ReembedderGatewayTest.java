package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.Reembedder.Status;
import dev.quarry.ingest.ReembedderFixture.Inserted;
import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.search.OnnxEmbedder;
import dev.quarry.support.TestDatabase;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Re-embedding in the gateway: started after migrations, shown by /readyz, stopped with the gateway")
class ReembedderGatewayTest {
  private TestDatabase db;
  private Path dataDir;
  private Vertx vertx;
  private Config config;

  @BeforeEach
  void setUp() throws Exception {
    db = TestDatabase.create();
    dataDir = Files.createTempDirectory("quarry-reembed-test");
    config = db.config().withDataDir(dataDir).withHttpPort(0);
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      vertx.close().await();
    } finally {
      db.close();
      try (Stream<Path> walk = Files.walk(dataDir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private Inserted insertStale(int staleA, int staleB) throws Exception {
    try (Connection c = db.jdbc()) {
      return ReembedderFixture.insert(c, null, Tenants.DEFAULT, staleA, staleB, 0);
    }
  }

  @Test
  @DisplayName("the gateway serves while it re-embeds; /readyz reports the finished run and search finds the re-embedded chunks")
  void reembedsInTheBackground() throws Exception {
    Inserted corpus = insertStale(30, 10);
    Gateway gateway = new Gateway(config);
    vertx.deployVerticle(gateway).await();
    WebClient client = WebClient.create(vertx);

    Status status = gateway.reembedding().await();

    assertThat(status.state()).isEqualTo(Status.State.DONE);
    assertThat(status.total()).isEqualTo(corpus.staleCount());
    HttpResponse<Buffer> ready = client.get(gateway.port(), "localhost", "/readyz").send().await();
    assertThat(ready.statusCode()).isEqualTo(200);
    JsonObject body = ready.bodyAsJsonObject();
    assertThat(body.getString("status")).isEqualTo("ready");
    assertThat(body.getJsonObject("reembedding")).isEqualTo(new JsonObject()
        .put("state", "done").put("model", OnnxEmbedder.DEFAULT)
        .put("done", corpus.staleCount()).put("total", corpus.staleCount()));

    HttpResponse<Buffer> found = client.post(gateway.port(), "localhost", "/v1/search")
        .bearerTokenAuthentication(db.createKey(Tenants.DEFAULT))
        .sendJsonObject(new JsonObject().put("query", ReembedderFixture.LIGHTHOUSE_QUERY).put("limit", 3))
        .await();
    assertThat(found.statusCode()).as(found.bodyAsString()).isEqualTo(200);
    assertThat(found.bodyAsJsonObject().getJsonArray("results").getJsonObject(0).getString("chunk_id"))
        .isEqualTo(corpus.lighthouse().toString());
  }

  @Test
  @DisplayName("stopping the gateway mid-run ends the re-embed after its batch in flight: what it counted is exactly what was written")
  void stopsWithTheGateway() throws Exception {
    Inserted corpus = insertStale(300, 0);
    Gateway gateway = new Gateway(config);
    String deployment = vertx.deployVerticle(gateway).await();
    WebClient client = WebClient.create(vertx);
    HttpResponse<Buffer> ready = client.get(gateway.port(), "localhost", "/readyz").send().await();
    assertThat(ready.statusCode()).as("ready while re-embedding").isEqualTo(200);
    assertThat(ready.bodyAsJsonObject().getJsonObject("reembedding").getString("state"))
        .isIn("pending", "running");

    vertx.undeploy(deployment).await();

    assertThat(gateway.reembedding().isComplete()).isTrue();
    Status status = gateway.reembedding().result();
    assertThat(status.state()).isIn(Status.State.STOPPED, Status.State.DONE);
    try (Connection c = db.jdbc()) {
      long reembedded = ReembedderFixture.count(c,
          "SELECT count(*) FROM chunks WHERE embedding_model = '" + OnnxEmbedder.DEFAULT + "'");
      assertThat(reembedded).isEqualTo(status.done());
      if (status.state() == Status.State.STOPPED) {
        assertThat(reembedded).isLessThan(corpus.staleCount());
      }
    }
  }
}
