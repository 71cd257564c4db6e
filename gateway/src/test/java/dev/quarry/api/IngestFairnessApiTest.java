package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Records;
import dev.quarry.ingest.IngestService;
import dev.quarry.support.Await;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * One tenant's uploads neither keep another tenant's ingests waiting nor take more than their share
 * of the ingest workers, and past its {@code concurrent_ingests} quota the tenant is refused at once.
 * The real gateway, whose embeddings come over HTTP from a scripted OpenAI-compatible endpoint that
 * holds every passage containing {@link #HOLD} until the test lets them go: an ingest held there has
 * a worker and keeps it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Ingests: a tenant's take their turns in a line of their own, and past concurrent_ingests it gets 429")
class IngestFairnessApiTest {
  private static final String HOLD = "HOLD-IN-THE-MODEL";
  private static final long QUOTA = 4; // the built-in default of concurrent_ingests

  private Vertx modelVertx;
  private TestGateway gateway;
  private final AtomicInteger held = new AtomicInteger();
  private final AtomicInteger mostHeld = new AtomicInteger();
  private volatile Promise<Void> release = Promise.promise();

  @BeforeAll
  void start() throws Exception {
    modelVertx = Vertx.vertx();
    HttpServer embeddings = modelVertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body -> {
      JsonArray input = body.toJsonObject().getJsonArray("input");
      JsonArray data = new JsonArray();
      for (int i = 0; i < input.size(); i++) {
        data.add(new JsonObject().put("index", i).put("embedding", new JsonArray(List.of(1.0, 0.0, 0.0))));
      }
      Future<Void> when = Future.succeededFuture();
      if (input.encode().contains(HOLD)) {
        mostHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
        when = release.future().andThen(v -> held.decrementAndGet());
      }
      when.onComplete(v -> req.response().putHeader("Content-Type", "application/json")
          .end(new JsonObject().put("data", data).encode()));
    })).listen(0, "127.0.0.1").await();
    String base = "http://127.0.0.1:" + embeddings.actualPort() + "/v1/";
    gateway = TestGateway.start(config -> Records.with(config, Map.of("embeddingProvider", "openai",
        "embeddingBaseUrl", base, "embeddingModel", "scripted-3d")));
  }

  @BeforeEach
  void holdAgain() {
    release = Promise.promise();
    mostHeld.set(0);
  }

  @AfterAll
  void stop() throws Exception {
    release.tryComplete();
    try {
      gateway.close();
    } finally {
      modelVertx.close().await();
    }
  }

  private static Future<HttpResponse<Buffer>> ingest(WebClient client, String uri, String text) {
    return client.post("/v1/documents").sendJsonObject(new JsonObject().put("uri", uri)
        .put("content_type", "text/plain").put("content", text));
  }

  @Test
  @DisplayName("a tenant with its quota of ingests under way: two run, two wait, the fifth is 429, another tenant's goes through")
  void noisyTenant() {
    WebClient noisy = gateway.clientFor(gateway.createTenant("noisy").apiKey());
    WebClient quiet = gateway.clientFor(gateway.createTenant("quiet").apiKey());
    List<Future<HttpResponse<Buffer>>> sent = new ArrayList<>();
    for (int i = 0; i <= QUOTA; i++) {
      sent.add(ingest(noisy, "noisy-" + i + ".txt", "Report " + i + ". " + HOLD));
    }
    Await.until(() -> held.get() >= IngestService.TENANT_WORKERS, Duration.ofSeconds(30),
        "the noisy tenant's turns taken in the model");
    assertThat(held.get()).as("noisy ingests in the model").isEqualTo(IngestService.TENANT_WORKERS);
    Await.until(() -> sent.stream().anyMatch(Future::isComplete), Duration.ofSeconds(30),
        "the request over the quota answered");

    List<Future<HttpResponse<Buffer>>> answered = sent.stream().filter(Future::isComplete).toList();
    assertThat(answered).as("the one request over concurrent_ingests").hasSize(1);
    HttpResponse<Buffer> refused = answered.get(0).result();
    assertThat(refused.statusCode()).as(refused.bodyAsString()).isEqualTo(429);
    assertThat(refused.getHeader("Retry-After")).isEqualTo("5");
    JsonObject error = refused.bodyAsJsonObject().getJsonObject("error");
    assertThat(error.getString("code")).isEqualTo("quota_exceeded");
    assertThat(error.getString("message")).contains("quota concurrent_ingests exceeded (limit " + QUOTA + ")");

    // The quiet tenant's ingest gets a worker at once, while the noisy tenant's others wait in its line.
    HttpResponse<Buffer> other = ingest(quiet, "quiet.txt", "The quiet tenant's one document.").await();
    assertThat(other.statusCode()).as(other.bodyAsString()).isEqualTo(201);
    assertThat(held.get()).as("noisy ingests in the model").isEqualTo(IngestService.TENANT_WORKERS);

    release.complete();
    for (Future<HttpResponse<Buffer>> f : sent) {
      if (!answered.contains(f)) {
        HttpResponse<Buffer> r = f.await();
        assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(201);
      }
    }
    assertThat(mostHeld.get()).as("the noisy tenant's ingests in the model at once, ever")
        .isEqualTo(IngestService.TENANT_WORKERS);
    // Every place is given back when its ingest ends.
    HttpResponse<Buffer> again = ingest(noisy, "noisy-again.txt", "Report again.").await();
    assertThat(again.statusCode()).as(again.bodyAsString()).isEqualTo(201);
  }

  @Test
  @DisplayName("an admin sets a tenant's own concurrent_ingests, bounded by its maximum")
  void ownQuota() {
    TestGateway.NewTenant tenant = gateway.createTenant("one-at-a-time");
    HttpResponse<Buffer> tooMuch = gateway.admin().put("/v1/admin/tenants/" + tenant.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("concurrent_ingests", 65)).await();
    assertThat(tooMuch.statusCode()).isEqualTo(400);
    assertThat(tooMuch.bodyAsString()).contains("concurrent_ingests", "QUARRY_QUOTA_CONCURRENT_INGESTS_MAX");
    HttpResponse<Buffer> set = gateway.admin().put("/v1/admin/tenants/" + tenant.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("concurrent_ingests", 1)).await();
    assertThat(set.bodyAsJsonObject().getJsonObject("quotas").getLong("concurrent_ingests")).isEqualTo(1);

    WebClient client = gateway.clientFor(tenant.apiKey());
    // Refused ingests give their place back: a malformed body, a document that converts to nothing.
    assertThat(client.post("/v1/documents").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("{not json")).await().statusCode()).isEqualTo(400);
    assertThat(ingest(client, "empty.txt", "").await().statusCode()).isBetween(400, 499);
    Future<HttpResponse<Buffer>> first = ingest(client, "first.txt", "The first. " + HOLD);
    Await.until(() -> held.get() == 1, Duration.ofSeconds(30), "the first ingest in the model");
    HttpResponse<Buffer> second = ingest(client, "second.txt", "The second.").await();
    assertThat(second.statusCode()).as(second.bodyAsString()).isEqualTo(429);
    assertThat(second.bodyAsString()).contains("quota concurrent_ingests exceeded (limit 1)");
    release.complete();
    assertThat(first.await().statusCode()).isEqualTo(201);
    assertThat(ingest(client, "second.txt", "The second.").await().statusCode()).isEqualTo(201);
  }
}
