package dev.quarry.cluster;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.agent.ScriptedModelServer;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.support.Await;
import dev.quarry.support.GatewayCluster;
import dev.quarry.support.SseClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Three gateway processes behind HAProxy on one PostgreSQL and the local Docker engine
 * ({@link GatewayCluster}): what one replica decides holds on all of them. A tenant gets its quota
 * and not three times it; a revoked key and a deleted tenant stop on every replica at once (by
 * notification, well inside the 10 s key cache and 5 s polling that were the only means before); a
 * cancel reaches the replica running the analysis; a replica killed with its places frees them when
 * its lease lapses, and comes back. An analysis is followed live and whole through any replica, its
 * followers counted across them; an MCP session is served by any replica, and counted across them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Three replicas behind a load balancer share one truth")
class ClusterTest {
  /** A cell that runs until something ends it. */
  private static final String FOREVER = "n = 0\nwhile True:\n    n = n + 1";
  /** Far inside the key cache's 10 s and the 5 s polling that a missed notification falls back on. */
  private static final Duration PROMPTLY = Duration.ofSeconds(3);

  private Vertx vertx;
  private ScriptedModelServer model;
  private GatewayCluster cluster;
  private DockerClient docker;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  void start() throws IOException {
    vertx = Vertx.vertx();
    model = ScriptedModelServer.start(vertx);
    docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST);
    cluster = GatewayCluster.builder().replicas(3)
        .setting("QUARRY_SANDBOX_IMAGE", RunnerImage.ensure())
        .setting("QUARRY_MODEL_BASE_URL", model.baseUrl())
        .setting("QUARRY_MODEL_API_KEY", "test-key")
        .setting("QUARRY_REPLICA_LEASE_SECONDS", "3")
        .start();
  }

  @AfterAll
  void stop() throws Exception {
    try {
      if (cluster != null) {
        cluster.close();
      }
    } finally {
      docker.close();
      model.close();
      vertx.close().await();
    }
  }

  @Test
  @DisplayName("requests per minute: 360 requests through the balancer admit the tenant's 120 (within 10%), not 360")
  void rateQuotaAcrossReplicas() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("rate-" + UUID.randomUUID());
    cluster.setQuotas(t.id(), new JsonObject().put("requests_per_minute", 120));
    AtomicInteger admitted = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    List<Integer> others = new ArrayList<>();
    long t0 = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try {
      List<Future<?>> sent = new ArrayList<>();
      for (int i = 0; i < 360; i++) {
        sent.add(pool.submit(() -> {
          int status = cluster.send("GET", "/v1/documents?limit=1", t.apiKey(), null).status();
          if (status == 200) {
            admitted.incrementAndGet();
          } else if (status == 429) {
            refused.incrementAndGet();
          } else {
            synchronized (others) {
              others.add(status);
            }
          }
        }));
      }
      for (Future<?> f : sent) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    double allowed = 120 + seconds * 2; // the bucket refills at 120 a minute while the test runs
    System.out.printf("rate quota 120/min across 3 replicas: %d admitted, %d refused of 360 in %.1f s%n",
        admitted.get(), refused.get(), seconds);
    assertThat(others).as("statuses other than 200 and 429").isEmpty();
    assertThat(admitted.get()).as("admitted in %.1f s (the bucket allows at most %.0f)", seconds, allowed)
        .isBetween(108, (int) Math.ceil(allowed));
  }

  @Test
  @DisplayName("request bodies: 40 trickled through the balancer hold 32 places across the replicas; 8 get 429")
  void bodyPlacesAcrossReplicas() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("bodies-" + UUID.randomUUID());
    String body = "{\"query\": \"tides\", \"limit\": 3}";
    List<Socket> sockets = new ArrayList<>();
    List<StringBuilder> answers = new ArrayList<>();
    try {
      for (int i = 0; i < 40; i++) {
        Socket s = new Socket("127.0.0.1", cluster.balancerPort());
        s.getOutputStream().write(("POST /v1/search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + t.apiKey()
            + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\nConnection: close\r\n\r\n"
            + body.substring(0, 5)).getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        sockets.add(s);
        answers.add(new StringBuilder());
      }
      Await.until(() -> countStarting(sockets, answers, "HTTP/1.1 429") == 8, Duration.ofSeconds(60),
          "8 of the 40 bodies to be refused");
      assertThat(countStarting(sockets, answers, "HTTP/1.1 429")).isEqualTo(8);
      assertThat(answers.stream().filter(a -> a.isEmpty())).as("bodies still awaited").hasSize(32);
      assertThat(answers.stream().map(StringBuilder::toString).filter(a -> a.startsWith("HTTP/1.1 429")))
          .allMatch(a -> a.contains("too_many_uploads"));
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }

  private static long countStarting(List<Socket> sockets, List<StringBuilder> answers, String prefix) {
    for (int i = 0; i < sockets.size(); i++) {
      try {
        InputStream in = sockets.get(i).getInputStream();
        for (int n = in.available(); n > 0; n = in.available()) {
          answers.get(i).append(new String(in.readNBytes(n), StandardCharsets.ISO_8859_1));
        }
      } catch (IOException closed) {
        // what came before stands
      }
    }
    return answers.stream().filter(a -> a.toString().startsWith(prefix)).count();
  }

  @Test
  @DisplayName("a key revoked through one replica is refused by every replica at once, though each had it cached;"
      + " the tenant's other key goes on working")
  void revocationReachesEveryReplica() {
    GatewayCluster.Tenant t = cluster.createTenant("revoke-" + UUID.randomUUID());
    GatewayCluster.Response second = cluster.send("POST", "/v1/admin/tenants/" + t.id() + "/keys",
        GatewayCluster.ADMIN_TOKEN, "{\"name\": \"second\"}");
    assertThat(second.status()).as(second.body()).isEqualTo(201);
    String kept = second.json().getString("api_key");
    for (int i = 0; i < cluster.size(); i++) {
      assertThat(onReplica(i, "GET", "/v1/documents?limit=1", t.apiKey(), null).status()).isEqualTo(200);
    }
    String keyId = cluster.send("GET", "/v1/admin/tenants/" + t.id() + "/keys", GatewayCluster.ADMIN_TOKEN, null)
        .json().getJsonArray("keys").stream().map(JsonObject.class::cast)
        .filter(k -> "initial".equals(k.getString("name"))).findFirst().orElseThrow().getString("id");
    GatewayCluster.Response revoked = onReplica(0, "DELETE", "/v1/admin/tenants/" + t.id() + "/keys/" + keyId,
        GatewayCluster.ADMIN_TOKEN, null);
    assertThat(revoked.status()).as(revoked.body()).isEqualTo(204);
    long t0 = System.nanoTime();
    for (int i = 0; i < cluster.size(); i++) {
      int replica = i;
      Await.until(() -> onReplica(replica, "GET", "/v1/documents?limit=1", t.apiKey(), null).status() == 401,
          PROMPTLY, "replica " + i + " to refuse the revoked key");
    }
    System.out.printf("revoked key refused on all 3 replicas %d ms after the revocation%n",
        (System.nanoTime() - t0) / 1_000_000);
    for (int i = 0; i < cluster.size(); i++) {
      assertThat(onReplica(i, "GET", "/v1/documents?limit=1", kept, null).status()).isEqualTo(200);
    }
  }

  @Test
  @DisplayName("a tenant deleted through one replica: its analyses running on all three end TenantDeleted at once,"
      + " and its sandboxes are gone from every replica")
  void deletionEndsAnalysesEverywhere() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("doomed-" + UUID.randomUUID());
    model.reset();
    List<CompletableFuture<HttpResponse<String>>> streams = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      model.then(execute(FOREVER));
      streams.add(streamAnalysis(cluster.replicaUrl(i), t.apiKey(), "Count forever, " + i + "?"));
      int replica = i;
      Await.until(() -> tenantContainers(replica, t.id()) == 1, Duration.ofSeconds(90),
          "the analysis' sandbox on replica " + i);
    }
    GatewayCluster.Response deleted = onReplica(0, "DELETE", "/v1/admin/tenants/" + t.id(),
        GatewayCluster.ADMIN_TOKEN, null);
    assertThat(deleted.status()).as(deleted.body()).isEqualTo(204);
    long t0 = System.nanoTime();
    for (int i = 0; i < cluster.size(); i++) {
      HttpResponse<String> ended = streams.get(i).get(30, TimeUnit.SECONDS);
      assertThat(ended.body()).as("replica %d's stream", i).contains("\"TenantDeleted\"");
    }
    System.out.printf("a deleted tenant's analyses on 3 replicas all ended %d ms after the deletion answered%n",
        (System.nanoTime() - t0) / 1_000_000);
    for (int i = 0; i < cluster.size(); i++) {
      int replica = i;
      Await.until(() -> tenantContainers(replica, t.id()) == 0, PROMPTLY.multipliedBy(3),
          "the deleted tenant's sandbox on replica " + i + " to go");
    }
    assertThat(cluster.send("GET", "/v1/documents", t.apiKey(), null).status()).isEqualTo(401);
  }

  @Test
  @DisplayName("a cancel sent to one replica ends the analysis running on another (cancelled); a second cancel is 409")
  void cancelAcrossReplicas() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("cancel-" + UUID.randomUUID());
    model.reset();
    model.then(execute(FOREVER));
    CompletableFuture<HttpResponse<String>> stream = streamAnalysis(cluster.replicaUrl(1), t.apiKey(), "Count forever?");
    Await.until(() -> tenantContainers(1, t.id()) == 1, Duration.ofSeconds(90), "the analysis' sandbox on replica 1");
    JsonArray listed = onReplica(2, "GET", "/v1/analyses", t.apiKey(), null).json().getJsonArray("analyses");
    String id = listed.getJsonObject(0).getString("id");
    GatewayCluster.Response asked = onReplica(2, "POST", "/v1/analyses/" + id + "/cancel", t.apiKey(), null);
    assertThat(asked.status()).as(asked.body()).isEqualTo(202);
    HttpResponse<String> ended = stream.get(30, TimeUnit.SECONDS);
    assertThat(ended.body()).contains("\"cancelled\"");
    Await.until(() -> "cancelled".equals(onReplica(0, "GET", "/v1/analyses/" + id, t.apiKey(), null).json()
        .getString("status")), PROMPTLY, "the record to say cancelled");
    GatewayCluster.Response again = onReplica(0, "POST", "/v1/analyses/" + id + "/cancel", t.apiKey(), null);
    assertThat(again.status()).as(again.body()).isEqualTo(409);
    assertThat(again.body()).contains("not_running");
    assertThat(onReplica(0, "POST", "/v1/analyses/" + UUID.randomUUID() + "/cancel", t.apiKey(), null).status())
        .isEqualTo(404);
  }

  @Test
  @DisplayName("concurrent analyses: a replica killed (-9) with the tenant's only place frees it when its lease lapses,"
      + " and starts again")
  void killedReplicaFreesItsPlaces() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("killed-" + UUID.randomUUID());
    cluster.setQuotas(t.id(), new JsonObject().put("concurrent_analyses", 1));
    model.reset();
    model.then(execute(FOREVER));
    streamAnalysis(cluster.replicaUrl(2), t.apiKey(), "Count forever?");
    Await.until(() -> tenantContainers(2, t.id()) == 1, Duration.ofSeconds(90), "the analysis' sandbox on replica 2");
    GatewayCluster.Response refused = onReplica(0, "POST", "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "Another?").encode());
    assertThat(refused.status()).as(refused.body()).isEqualTo(429);
    assertThat(refused.body()).contains("concurrent_analyses");
    cluster.kill(2);
    long t0 = System.nanoTime();
    model.then(execute("print(2)"), answer("two", "print(2)"));
    // Accepted shows in the status of a streamed answer, without waiting for the analysis to end.
    Await.until(() -> acceptedStatus(cluster.replicaUrl(0), t.apiKey(), "Two?") == 200,
        Duration.ofSeconds(30), "the killed replica's place to be free");
    System.out.printf("a killed replica's place was free %d ms after the kill (lease 3 s)%n",
        (System.nanoTime() - t0) / 1_000_000);
    cluster.restart(2);
    assertThat(onReplica(2, "GET", "/v1/documents?limit=1", t.apiKey(), null).status()).isEqualTo(200);
    // Its earlier life's sandbox goes at its first reaper pass (its own gateway id, no longer in use).
    Await.until(() -> tenantContainers(2, t.id()) == 0, Duration.ofSeconds(90),
        "the killed replica's leftover sandbox to be reaped");
  }

  /**
   * A cell that works a little, prints and calls the gateway, 12 times: 24 events spread over the
   * cell (the runner sends what was printed before each call, so each print is one output event).
   */
  static final String CHATTY = "for i in range(12):\n    s = 0\n    for j in range(100000):\n        s = s + j\n"
      + "    print(i, s)\n    docs = await list_documents()";

  @Test
  @DisplayName("an analysis followed through the two replicas not running it is live (a cell's events arrive while it"
      + " still runs) and complete (every event once, in order, as its own stream has them, the terminal one last),"
      + " from the first event or after a Last-Event-ID")
  void streamFollowedThroughOtherReplicas() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("follow-" + UUID.randomUUID());
    model.reset();
    ScriptedModelServer.Held between = new ScriptedModelServer.Held();
    model.then(execute(CHATTY), between, answer("done", "print(1)"));
    try (SseClient own = SseClient.post(cluster.replicaUrl(0), "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "Chatty?").put("stream", true)
            .put("budgets", new JsonObject().put("list_documents_calls", 100)))) {
      assertThat(own.status(Duration.ofSeconds(90))).isEqualTo(200);
      String id = own.header("X-Analysis-Id", Duration.ofSeconds(5));
      String events = "/v1/analyses/" + id + "/events";
      try (SseClient one = SseClient.get(cluster.replicaUrl(1), events, t.apiKey(), 0);
          SseClient two = SseClient.get(cluster.replicaUrl(2), events, t.apiKey(), 0)) {
        // The first cell has run and the analysis waits for its model: it runs, and both followers
        // have everything so far, the cell's end included.
        between.asked().get(2, TimeUnit.MINUTES);
        Await.until(() -> hasCellResult(one) && hasCellResult(two), Duration.ofSeconds(10),
            "the followers on replicas 1 and 2 to have the first cell's result");
        assertThat(onReplica(2, "GET", "/v1/analyses/" + id, t.apiKey(), null).json().getString("status"))
            .isEqualTo("running");
        assertThat(own.done()).isNotDone();
        long resumeAfter = one.events().get(3).seq();
        try (SseClient resumed = SseClient.get(cluster.replicaUrl(1), events, t.apiKey(), resumeAfter)) {
          between.reply().complete(execute(CHATTY));
          CompletableFuture.allOf(own.done(), one.done(), two.done(), resumed.done()).get(3, TimeUnit.MINUTES);
          List<SseClient.Event> all = own.events();
          assertThat(all).extracting(SseClient.Event::seq)
              .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, all.size()).boxed().toList());
          assertThat(all.get(all.size() - 1).type()).isEqualTo("answer");
          assertThat(all).filteredOn(SseClient.Event::terminal).hasSize(1);
          assertThat(all).filteredOn(e -> "output".equals(e.type())).hasSize(24);
          assertThat(all).filteredOn(e -> "callback".equals(e.type())).hasSize(24);
          assertThat(one.events()).extracting(SseClient.Event::message)
              .as("replica 1's stream").containsExactlyElementsOf(all.stream().map(SseClient.Event::message).toList());
          assertThat(two.events()).extracting(SseClient.Event::message)
              .as("replica 2's stream").containsExactlyElementsOf(all.stream().map(SseClient.Event::message).toList());
          assertThat(resumed.events()).extracting(SseClient.Event::message).as("resumed after " + resumeAfter)
              .containsExactlyElementsOf(all.stream().filter(e -> e.seq() > resumeAfter).map(SseClient.Event::message)
                  .toList());
          System.out.printf("events of one analysis (%d): delay from its making to its arrival, p50/max ms:"
              + " own stream %s, followed on replica 1 %s, on replica 2 %s%n", all.size(), delays(own, resumeAfter),
              delays(one, resumeAfter), delays(two, resumeAfter));
        }
      }
    }
  }

  /** The status a stream was answered with, 0 when none came within 30 s. */
  private static int statusOf(SseClient client) {
    try {
      return client.status(Duration.ofSeconds(30));
    } catch (Exception e) {
      return 0;
    }
  }

  private static boolean hasCellResult(SseClient follower) {
    return follower.events().stream().anyMatch(e -> "cell_result".equals(e.type()));
  }

  /** p50 and max of the delays of the events after {@code afterSeq} (those made while every follower listened). */
  private static String delays(SseClient follower, long afterSeq) {
    long[] d = follower.events().stream().filter(e -> e.seq() > afterSeq).mapToLong(SseClient.Event::delayMs)
        .sorted().toArray();
    return d.length == 0 ? "-" : d[d.length / 2] + "/" + d[d.length - 1];
  }

  @Test
  @DisplayName("an analysis' followers are counted across the replicas: 8 through three replicas, a ninth is 429"
      + " too_many_followers on any of them, and a place given back is taken again")
  void followersCountedAcrossReplicas() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("followers-" + UUID.randomUUID());
    model.reset();
    ScriptedModelServer.Held held = new ScriptedModelServer.Held();
    model.then(execute("print(1)"), held);
    CompletableFuture<HttpResponse<String>> posted = http.sendAsync(HttpRequest.newBuilder(
            URI.create(cluster.replicaUrl(0) + "/v1/analyses")).timeout(Duration.ofMinutes(3))
        .header("Authorization", "Bearer " + t.apiKey()).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("question", "Wait?").encode())).build(),
        HttpResponse.BodyHandlers.ofString());
    held.asked().get(2, TimeUnit.MINUTES);
    String id = onReplica(1, "GET", "/v1/analyses", t.apiKey(), null).json().getJsonArray("analyses")
        .getJsonObject(0).getString("id");
    String events = "/v1/analyses/" + id + "/events";
    List<SseClient> followers = new ArrayList<>();
    try {
      for (int i = 0; i < 8; i++) {
        SseClient f = SseClient.get(cluster.replicaUrl(i % 3), events, t.apiKey(), 0);
        followers.add(f);
        // A follower through the store answers once it has something to send: its head with the first event.
        Await.until(() -> !f.events().isEmpty(), Duration.ofSeconds(10), "follower " + f + " to have begun");
      }
      for (int i = 0; i < 3; i++) {
        try (SseClient ninth = SseClient.get(cluster.replicaUrl(i), events, t.apiKey(), 0)) {
          assertThat(ninth.status(Duration.ofSeconds(30))).as("a ninth follower on replica " + i).isEqualTo(429);
          ninth.done().get(30, TimeUnit.SECONDS);
          assertThat(ninth.body()).contains("too_many_followers");
        }
      }
      followers.remove(1).close(); // replica 1's: its place goes back
      Await.until(() -> {
        SseClient again = SseClient.get(cluster.replicaUrl(2), events, t.apiKey(), 0);
        if (statusOf(again) == 200) {
          followers.add(again);
          return true;
        }
        again.close();
        return false;
      }, Duration.ofSeconds(10), "the place given back to be taken again");
      held.reply().complete(answer("one", "print(1)"));
      HttpResponse<String> done = posted.get(2, TimeUnit.MINUTES);
      assertThat(new JsonObject(done.body()).getString("status")).as(done.body()).isEqualTo("succeeded");
      for (SseClient f : followers) {
        f.done().get(30, TimeUnit.SECONDS);
        assertThat(f.events().get(f.events().size() - 1).type()).isEqualTo("answer");
      }
    } finally {
      followers.forEach(SseClient::close);
      held.reply().complete(answer("one", "print(1)"));
    }
  }

  private static final String MCP_INIT = new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "initialize")
      .put("params", new JsonObject().put("protocolVersion", "2025-06-18").put("capabilities", new JsonObject())
          .put("clientInfo", new JsonObject().put("name", "cluster-test").put("version", "1"))).encode();

  @Test
  @DisplayName("an MCP session opened through one replica is served by the others; ended through one, it is gone"
      + " from all; another tenant's key cannot use it")
  void mcpSessionOnEveryReplica() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("mcp-" + UUID.randomUUID());
    GatewayCluster.Tenant other = cluster.createTenant("mcp-other-" + UUID.randomUUID());
    HttpResponse<String> opened = mcp(0, t.apiKey(), null, "POST", MCP_INIT);
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    assertThat(mcp(1, t.apiKey(), session, "POST", new JsonObject().put("jsonrpc", "2.0")
        .put("method", "notifications/initialized").encode()).statusCode()).isEqualTo(202);
    for (int i = 0; i < cluster.size(); i++) {
      HttpResponse<String> listed = mcp(i, t.apiKey(), session, "POST", new JsonObject().put("jsonrpc", "2.0")
          .put("id", 10 + i).put("method", "tools/list").encode());
      assertThat(listed.statusCode()).as("tools/list on replica %d: %s", i, listed.body()).isEqualTo(200);
      assertThat(listed.body()).contains("\"list_documents\"").contains("\"id\":" + (10 + i));
      HttpResponse<String> called = mcp(i, t.apiKey(), session, "POST", new JsonObject().put("jsonrpc", "2.0")
          .put("id", 20 + i).put("method", "tools/call").put("params", new JsonObject().put("name", "list_documents")
              .put("arguments", new JsonObject())).encode());
      assertThat(called.statusCode()).isEqualTo(200);
      assertThat(called.body()).contains("\"documents\"").doesNotContain("\"isError\":true");
    }
    assertThat(mcp(2, other.apiKey(), session, "POST", new JsonObject().put("jsonrpc", "2.0").put("id", 3)
        .put("method", "tools/list").encode()).statusCode()).as("another tenant naming the session").isEqualTo(404);
    assertThat(mcp(2, t.apiKey(), session, "DELETE", null).statusCode()).isEqualTo(204);
    for (int i = 0; i < cluster.size(); i++) {
      assertThat(mcp(i, t.apiKey(), session, "POST", new JsonObject().put("jsonrpc", "2.0").put("id", 4)
          .put("method", "tools/list").encode()).statusCode()).as("the ended session on replica " + i).isEqualTo(404);
    }
    // The SDK's own client through the balancer: its requests land on each replica in turn.
    var transport = HttpClientStreamableHttpTransport.builder(cluster.balancerUrl()).endpoint("/mcp")
        .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + t.apiKey())).build();
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofMinutes(1)).build();
    try {
      client.initialize();
      for (int i = 0; i < 6; i++) {
        assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name).contains("search", "list_documents");
        var result = client.callTool(new McpSchema.CallToolRequest("list_documents", java.util.Map.of()));
        assertThat(result.isError()).isNotEqualTo(true);
      }
    } finally {
      client.closeGracefully();
    }
  }

  @Test
  @DisplayName("MCP sessions are counted across the replicas: the tenant's 64 opened through the balancer, a 65th is"
      + " 429 on any replica until one ends")
  void mcpSessionsCountedAcrossReplicas() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("mcp-many-" + UUID.randomUUID());
    List<String> sessions = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      HttpResponse<String> opened = mcp(i % 3, t.apiKey(), null, "POST", MCP_INIT);
      assertThat(opened.statusCode()).as("session %d: %s", i, opened.body()).isEqualTo(200);
      sessions.add(opened.headers().firstValue("Mcp-Session-Id").orElseThrow());
    }
    for (int i = 0; i < cluster.size(); i++) {
      HttpResponse<String> refused = mcp(i, t.apiKey(), null, "POST", MCP_INIT);
      assertThat(refused.statusCode()).as("a 65th session on replica %d: %s", i, refused.body()).isEqualTo(429);
    }
    assertThat(mcp(1, t.apiKey(), sessions.get(0), "DELETE", null).statusCode()).isEqualTo(204);
    assertThat(mcp(2, t.apiKey(), null, "POST", MCP_INIT).statusCode()).isEqualTo(200);
  }

  /** One MCP request to a replica, with the session when given ({@code json} null: no body). */
  private HttpResponse<String> mcp(int replica, String key, String session, String method, String json)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(cluster.replicaUrl(replica) + "/mcp"))
        .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + key)
        .header("Accept", "application/json, text/event-stream")
        .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
    if (json != null) {
      b.header("Content-Type", "application/json");
    }
    if (session != null) {
      b.header("Mcp-Session-Id", session);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private GatewayCluster.Response onReplica(int index, String method, String path, String bearer, String json) {
    return cluster.send(cluster.replicaUrl(index), method, path, bearer, json);
  }

  private long tenantContainers(int replica, UUID tenant) {
    return cluster.containers(docker, replica).stream()
        .filter(c -> tenant.toString().equals(c.getLabels().get(ContainerLauncher.LABEL_TENANT)))
        .filter(c -> !"exited".equals(c.getState()) && !"dead".equals(c.getState()))
        .count();
  }

  /** The status a streamed analysis is answered with (200 once it has started), its stream left at once. */
  private int acceptedStatus(String baseUrl, String key, String question) {
    try {
      HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl + "/v1/analyses"))
          .timeout(Duration.ofSeconds(30))
          .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("question", question).put("stream", true)
              .encode()))
          .build(), HttpResponse.BodyHandlers.ofInputStream());
      r.body().close();
      return r.statusCode();
    } catch (IOException e) {
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }

  /** POSTs an analysis with its events streamed; completes with the whole stream once it ends. */
  private CompletableFuture<HttpResponse<String>> streamAnalysis(String baseUrl, String key, String question) {
    return http.sendAsync(HttpRequest.newBuilder(URI.create(baseUrl + "/v1/analyses"))
        .timeout(Duration.ofMinutes(3))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("question", question).put("stream", true).encode()))
        .build(), HttpResponse.BodyHandlers.ofString());
  }
}
