package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import dev.quarry.support.ThrowawayCluster;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The gateway through a PostgreSQL restart, on a cluster of the test's own: while the database is
 * down requests that need it get a 503 to retry and the gateway is unready; once it is back, both
 * recover without a gateway restart (the pool replaces the connections the restart ended).
 */
class DatabaseOutageTest {
  private static ThrowawayCluster cluster;
  private static TestGateway gateway;

  @BeforeAll
  static void start() throws Exception {
    cluster = ThrowawayCluster.create();
    gateway = TestGateway.start(c -> cluster.config().withDataDir(c.dataDir()).withHttpPort(0)
        .withMaxUploadBytes(c.maxUploadBytes()).withTenancy(c.tenancy()));
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (gateway != null) {
        gateway.close();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
    }
  }

  @Test
  @DisplayName("a stopped database gives 503 database_unavailable with Retry-After and an unready gateway, then both recover")
  void outageAndRecovery() throws Exception {
    TestGateway.NewTenant tenant = gateway.createTenant("outage");
    assertThat(documents(tenant).statusCode()).isEqualTo(200);

    cluster.stop();
    try {
      HttpResponse<Buffer> during = documents(tenant);
      assertThat(during.statusCode()).as(during.bodyAsString()).isEqualTo(503);
      assertThat(during.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("database_unavailable");
      assertThat(during.getHeader("Retry-After")).isEqualTo("5");
      HttpResponse<Buffer> ready = gateway.bareClient().get("/readyz").send().await();
      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(ready.bodyAsJsonObject().getJsonObject("checks").getJsonObject("database").getBoolean("ok")).isFalse();
    } finally {
      cluster.start();
    }

    HttpResponse<Buffer> after = documents(tenant);
    assertThat(after.statusCode()).as(after.bodyAsString()).isEqualTo(200);
    HttpResponse<Buffer> ready = gateway.bareClient().get("/readyz").send().await();
    assertThat(ready.statusCode()).as(ready.bodyAsString()).isEqualTo(200);
    assertThat(new JsonObject(ready.bodyAsString()).getString("status")).isEqualTo("ready");
  }

  private static HttpResponse<Buffer> documents(TestGateway.NewTenant tenant) {
    return gateway.clientFor(tenant.apiKey()).get("/v1/documents").send().await();
  }
}
