package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Tenants and API keys, through /v1/admin/ and Authorization: Bearer")
class TenantAdminTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  private static JsonObject doc(String uri) {
    return new JsonObject().put("uri", uri).put("content", "# " + uri + "\n\nSome text about " + uri + ".\n")
        .put("content_type", "text/markdown");
  }

  private HttpResponse<Buffer> ingest(WebClient client, String uri) {
    return client.post("/v1/documents").sendJsonObject(doc(uri)).await();
  }

  @Test
  @DisplayName("POST /v1/admin/tenants gives the tenant's id and a key that works at once; listings never show the key again")
  void createTenantAndKey() throws Exception {
    HttpResponse<Buffer> created = gateway.admin().post("/v1/admin/tenants")
        .sendJsonObject(new JsonObject().put("name", "acme")).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);
    JsonObject body = created.bodyAsJsonObject();
    String key = body.getString("api_key");
    String prefix = body.getJsonObject("key").getString("prefix");
    assertThat(key).matches("qk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}").startsWith(prefix + "_");

    HttpResponse<Buffer> listed = gateway.clientFor(key).get("/v1/documents").send().await();
    assertThat(listed.statusCode()).isEqualTo(200);
    assertThat(listed.bodyAsJsonObject().getJsonArray("documents")).isEmpty();

    HttpResponse<Buffer> keys = gateway.admin().get("/v1/admin/tenants/" + body.getString("id") + "/keys").send().await();
    assertThat(keys.statusCode()).isEqualTo(200);
    assertThat(keys.bodyAsString()).contains(prefix).doesNotContain(key.substring(prefix.length() + 1));
    HttpResponse<Buffer> tenants = gateway.admin().get("/v1/admin/tenants").send().await();
    assertThat(tenants.bodyAsJsonObject().getJsonArray("tenants").stream()
        .map(t -> ((JsonObject) t).getString("name"))).contains("acme", "default");

    // Stored hashed: no column of any key row holds the key or its secret part.
    try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT api_keys::text FROM api_keys")) {
      while (rs.next()) {
        assertThat(rs.getString(1)).doesNotContain(key.substring(prefix.length() + 1));
      }
    }
  }

  @Test
  @DisplayName("a second tenant with a taken name is refused with 409")
  void duplicateName() {
    gateway.createTenant("twice");
    HttpResponse<Buffer> again = gateway.admin().post("/v1/admin/tenants")
        .sendJsonObject(new JsonObject().put("name", "twice")).await();
    assertThat(again.statusCode()).isEqualTo(409);
    assertThat(again.bodyAsJsonObject().getJsonObject("error").getString("message")).contains("twice");
  }

  @Test
  @DisplayName("admin requests without the admin token, or with a tenant's key, are refused with 401")
  void adminNeedsTheToken() {
    assertThat(gateway.bareClient().get("/v1/admin/tenants").send().await().statusCode()).isEqualTo(401);
    assertThat(gateway.clientFor("not-the-token-at-all-xx").get("/v1/admin/tenants").send().await().statusCode())
        .isEqualTo(401);
    assertThat(gateway.client().get("/v1/admin/tenants").send().await().statusCode()).isEqualTo(401);
  }

  @Test
  @DisplayName("tenant endpoints without a key, with a malformed key or an unknown one answer 401 naming the header")
  void keyRequired() {
    HttpResponse<Buffer> none = gateway.bareClient().get("/v1/documents").send().await();
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(none.getHeader("WWW-Authenticate")).isEqualTo("Bearer");
    assertThat(none.bodyAsJsonObject().getJsonObject("error").getString("message")).contains("Authorization: Bearer");
    assertThat(gateway.clientFor("garbage").get("/v1/documents").send().await().statusCode()).isEqualTo(401);
    String unknown = "qk_000000000000_" + "A".repeat(43);
    assertThat(gateway.clientFor(unknown).get("/v1/documents").send().await().statusCode()).isEqualTo(401);
    assertThat(gateway.clientFor(TestGateway.ADMIN_TOKEN).get("/v1/documents").send().await().statusCode())
        .as("the admin token is not a tenant's key").isEqualTo(401);
    // Probes stay open.
    assertThat(gateway.bareClient().get("/healthz").send().await().statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("a revoked key stops working; the tenant's other keys keep working")
  void revoke() {
    TestGateway.NewTenant t = gateway.createTenant("revoking");
    String second = gateway.createKey(t.id());
    HttpResponse<Buffer> keys = gateway.admin().get("/v1/admin/tenants/" + t.id() + "/keys").send().await();
    JsonArray list = keys.bodyAsJsonObject().getJsonArray("keys");
    assertThat(list).hasSize(2);
    String firstId = list.getJsonObject(0).getString("id");

    HttpResponse<Buffer> revoked = gateway.admin().delete("/v1/admin/tenants/" + t.id() + "/keys/" + firstId).send().await();
    assertThat(revoked.statusCode()).isEqualTo(204);

    assertThat(gateway.clientFor(t.apiKey()).get("/v1/documents").send().await().statusCode()).isEqualTo(401);
    assertThat(gateway.clientFor(second).get("/v1/documents").send().await().statusCode()).isEqualTo(200);
    JsonObject listedAfter = gateway.admin().get("/v1/admin/tenants/" + t.id() + "/keys").send().await()
        .bodyAsJsonObject().getJsonArray("keys").getJsonObject(0);
    assertThat(listedAfter.getString("revoked_at")).isNotNull();
  }

  @Test
  @DisplayName("a key can only be revoked through its own tenant")
  void revokeThroughAnotherTenant() {
    TestGateway.NewTenant a = gateway.createTenant("key-owner");
    TestGateway.NewTenant b = gateway.createTenant("key-thief");
    String keyId = gateway.admin().get("/v1/admin/tenants/" + a.id() + "/keys").send().await()
        .bodyAsJsonObject().getJsonArray("keys").getJsonObject(0).getString("id");
    HttpResponse<Buffer> wrong = gateway.admin().delete("/v1/admin/tenants/" + b.id() + "/keys/" + keyId).send().await();
    assertThat(wrong.statusCode()).isEqualTo(404);
    assertThat(gateway.clientFor(a.apiKey()).get("/v1/documents").send().await().statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("deleting a tenant removes its documents, chunks and keys, and nobody else's")
  void deleteTenant() {
    TestGateway.NewTenant doomed = gateway.createTenant("doomed");
    TestGateway.NewTenant survivor = gateway.createTenant("survivor");
    assertThat(ingest(gateway.clientFor(doomed.apiKey()), "doomed.md").statusCode()).isEqualTo(201);
    assertThat(ingest(gateway.clientFor(survivor.apiKey()), "survivor.md").statusCode()).isEqualTo(201);
    long documentsBefore = gateway.count("documents");
    long chunksBefore = gateway.count("chunks");

    HttpResponse<Buffer> deleted = gateway.admin().delete("/v1/admin/tenants/" + doomed.id()).send().await();
    assertThat(deleted.statusCode()).as(deleted.bodyAsString()).isEqualTo(204);

    assertThat(gateway.count("documents")).isEqualTo(documentsBefore - 1);
    assertThat(gateway.count("chunks")).isLessThan(chunksBefore);
    assertThat(gateway.clientFor(doomed.apiKey()).get("/v1/documents").send().await().statusCode()).isEqualTo(401);
    assertThat(gateway.admin().get("/v1/admin/tenants/" + doomed.id()).send().await().statusCode()).isEqualTo(404);
    HttpResponse<Buffer> survivorDocs = gateway.clientFor(survivor.apiKey()).get("/v1/documents").send().await();
    assertThat(survivorDocs.bodyAsJsonObject().getJsonArray("documents")).hasSize(1);
    assertThat(gateway.admin().delete("/v1/admin/tenants/" + doomed.id()).send().await().statusCode()).isEqualTo(404);
  }

  @Test
  @DisplayName("deleting a tenant removes its /documents files and their version markers under .state (red team R6-5)")
  void deleteTenantRemovesItsFiles() {
    TestGateway.NewTenant doomed = gateway.createTenant("doomed-files");
    TestGateway.NewTenant survivor = gateway.createTenant("survivor-files");
    WebClient doomedClient = gateway.clientFor(doomed.apiKey());
    for (String uri : new String[] {"one.md", "two.md", "three.md"}) {
      assertThat(ingest(doomedClient, uri).statusCode()).isEqualTo(201);
    }
    assertThat(ingest(gateway.clientFor(survivor.apiKey()), "kept.md").statusCode()).isEqualTo(201);
    java.nio.file.Path root = gateway.config().dataDir().resolve("documents");
    java.nio.file.Path state = root.resolve(".state").resolve(doomed.id().toString());
    assertThat(root.resolve(doomed.id().toString())).isDirectory();
    assertThat(state).isDirectory();

    HttpResponse<Buffer> deleted = gateway.admin().delete("/v1/admin/tenants/" + doomed.id()).send().await();
    assertThat(deleted.statusCode()).as(deleted.bodyAsString()).isEqualTo(204);

    assertThat(root.resolve(doomed.id().toString())).doesNotExist();
    assertThat(state).doesNotExist();
    assertThat(root.resolve(survivor.id().toString())).isDirectory();
    assertThat(root.resolve(".state").resolve(survivor.id().toString())).isDirectory();
  }

  @Test
  @DisplayName("deleting a tenant gives back at once the memory its search copies held (before, they stayed"
      + " until evicted, taking budget from live tenants)")
  void deleteTenantFreesItsSearchCopies() throws Exception {
    try (TestGateway own = TestGateway.start()) {
      TestGateway.NewTenant doomed = own.createTenant("copied");
      WebClient client = own.clientFor(doomed.apiKey());
      assertThat(ingest(client, "copied.md").statusCode()).isEqualTo(201);
      // A search asks for the tenant's copies, built in the background: search until they are held.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!(gauge(own, "quarry_search_term_index_bytes") > 0 && gauge(own, "quarry_search_copy_builds") == 0)) {
        assertThat(System.nanoTime()).as("copies built within a minute").isLessThan(deadline);
        HttpResponse<Buffer> searched = client.post("/v1/search")
            .sendJsonObject(new JsonObject().put("query", "text about copied")).await();
        assertThat(searched.statusCode()).as(searched.bodyAsString()).isEqualTo(200);
      }

      HttpResponse<Buffer> deleted = own.admin().delete("/v1/admin/tenants/" + doomed.id()).send().await();
      assertThat(deleted.statusCode()).as(deleted.bodyAsString()).isEqualTo(204);
      assertThat(gauge(own, "quarry_search_term_index_bytes")).as("bytes of copies held").isZero();
    }
  }

  private static double gauge(TestGateway gateway, String name) {
    return gateway.gateway().metrics().registry().get(name).gauge().value();
  }

  @Test
  @DisplayName("admin input is validated: names, ids and quota fields are named in the error")
  void adminValidation() {
    HttpResponse<Buffer> noName = gateway.admin().post("/v1/admin/tenants").sendJsonObject(new JsonObject()).await();
    assertThat(noName.statusCode()).isEqualTo(400);
    assertThat(noName.bodyAsString()).contains("'name'");
    HttpResponse<Buffer> badId = gateway.admin().get("/v1/admin/tenants/nope/keys").send().await();
    assertThat(badId.statusCode()).isEqualTo(400);
    assertThat(badId.bodyAsString()).contains("tenant id");
    HttpResponse<Buffer> missing = gateway.admin().post("/v1/admin/tenants/" + UUID.randomUUID() + "/keys")
        .sendBuffer(Buffer.buffer("{}".getBytes(StandardCharsets.UTF_8))).await();
    assertThat(missing.statusCode()).isEqualTo(404);
    TestGateway.NewTenant t = gateway.createTenant("quota-fields");
    HttpResponse<Buffer> unknownQuota = gateway.admin().put("/v1/admin/tenants/" + t.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("bananas", 3)).await();
    assertThat(unknownQuota.statusCode()).isEqualTo(400);
    assertThat(unknownQuota.bodyAsString()).contains("'bananas'");
    HttpResponse<Buffer> tooHigh = gateway.admin().put("/v1/admin/tenants/" + t.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("requests_per_minute", Long.MAX_VALUE)).await();
    assertThat(tooHigh.statusCode()).isEqualTo(400);
    assertThat(tooHigh.bodyAsString()).contains("requests_per_minute");
  }
}
