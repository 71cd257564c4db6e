package dev.quarry.cluster;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.ScriptedModelServer;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.support.Await;
import dev.quarry.support.GatewayCluster;
import dev.quarry.support.ModelPlans;
import dev.quarry.support.SseClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Durable analyses on three gateways behind HAProxy (issue 35): a replica killed in the middle of a
 * cell or while its analysis waits for the model, or drained, and the analysis ends on another
 * replica with the answer and program of an uninterrupted run, no recorded model turn asked twice,
 * and a follower through a surviving replica seeing every step once; a follow-up on another replica
 * reads the first question's variables, and one whose rebuild diverges ends with the typed error.
 *
 * <p>The model is a scripted one answering each analysis by a plan named in its question
 * ({@link ModelPlans}): the cells to run in order, then an answer quoting the last cell's output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Analyses outlive their replica and take follow-ups on any replica")
class DurableAnalysesTest {
  private static final Duration FINISH = Duration.ofMinutes(2);

  private Vertx vertx;
  private ScriptedModelServer model;
  private GatewayCluster cluster;
  private final ModelPlans plans = new ModelPlans();

  @BeforeAll
  void start() throws IOException {
    vertx = Vertx.vertx();
    model = ScriptedModelServer.start(vertx);
    model.otherwise(plans::reply);
    cluster = GatewayCluster.builder().replicas(3)
        .setting("QUARRY_SANDBOX_IMAGE", RunnerImage.ensure())
        .setting("QUARRY_MODEL_BASE_URL", model.baseUrl())
        .setting("QUARRY_MODEL_API_KEY", "test-key")
        // Long enough that a replica starved of CPU by the other suites does not lose its lease while it lives.
        .setting("QUARRY_REPLICA_LEASE_SECONDS", "6")
        .start();
  }

  @BeforeEach
  void everyReplicaUp() throws IOException {
    model.holdLlm(null);
    for (int i = 0; i < cluster.size(); i++) {
      if (!cluster.alive(i)) {
        cluster.restart(i);
      }
    }
  }

  @AfterAll
  void stop() throws Exception {
    try {
      if (cluster != null) {
        cluster.close();
      }
    } finally {
      model.close();
      vertx.close().await();
    }
  }

  /** The model's requests for a plan's question (each turn of it asked). */
  private long asked(String token) {
    return model.requests().stream().filter(r -> r.encode().contains(token)).count();
  }

  /** As {@link #asked(String)}, leaving out the requests of a follow-up (they hold the first question too). */
  private long asked(String token, String followUp) {
    return model.requests().stream().filter(r -> r.encode().contains(token) && !r.encode().contains(followUp)).count();
  }

  private JsonObject awaitEnd(String id, GatewayCluster.Tenant t) {
    JsonObject[] last = new JsonObject[1];
    Await.until(() -> {
      GatewayCluster.Response r = cluster.send("GET", "/v1/analyses/" + id, t.apiKey(), null);
      if (r.status() != 200) {
        return false;
      }
      last[0] = r.json();
      return !"running".equals(last[0].getString("status"));
    }, FINISH, "analysis " + id + " to end");
    return last[0];
  }

  /** An uninterrupted run of the plan's cells (its own token: the answer and program depend only on the cells). */
  private JsonObject uninterrupted(GatewayCluster.Tenant t, List<String> steps) {
    String token = plans.plan(steps);
    GatewayCluster.Response r = cluster.send(cluster.replicaUrl(1), "POST", "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "Baseline " + token).encode(), FINISH);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().getString("status")).as(r.body()).isEqualTo("succeeded");
    return r.json().put("asked", asked(token));
  }

  private static List<SseClient.Event> ofType(List<SseClient.Event> events, String type) {
    return events.stream().filter(e -> type.equals(e.type())).toList();
  }

  /** Every event once, in order, one move, one terminal event last, and each step's code and result once. */
  private static void seenOnce(List<SseClient.Event> events, int steps) {
    assertThat(events).extracting(SseClient.Event::seq)
        .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, events.size()).boxed().toList());
    assertThat(ofType(events, "moved")).hasSize(1);
    assertThat(events).filteredOn(SseClient.Event::terminal).hasSize(1);
    assertThat(events.get(events.size() - 1).type()).isEqualTo("answer");
    assertThat(ofType(events, "code")).extracting(e -> e.json().getInteger("step"))
        .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, steps).boxed().toList());
    assertThat(ofType(events, "cell_result")).extracting(e -> e.json().getInteger("step"))
        .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, steps).boxed().toList());
  }

  @Test
  @DisplayName("a replica killed in the middle of a cell (its llm() call in flight): the analysis ends on another"
      + " replica with the uninterrupted answer and program, no recorded turn asked again, the cell's output seen once")
  void killedMidCell() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("mid-cell-" + UUID.randomUUID());
    List<String> steps = List.of("x = 41", "x = x + 1\nprint('before')\nr = await llm('say ok')\nprint(x, r)",
        "print(x * 2, r)");
    JsonObject baseline = uninterrupted(t, steps);
    String token = plans.plan(steps);
    CompletableFuture<Void> gate = new CompletableFuture<>();
    model.holdLlm(gate);
    int llmBefore = model.llmRequests().size();
    try (SseClient own = SseClient.post(cluster.replicaUrl(0), "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "Killed " + token).put("stream", true))) {
      assertThat(own.status(Duration.ofSeconds(90))).isEqualTo(200);
      String id = own.header("X-Analysis-Id", Duration.ofSeconds(5));
      try (SseClient follower = SseClient.get(cluster.replicaUrl(2), "/v1/analyses/" + id + "/events", t.apiKey(), 0)) {
        Await.until(() -> model.llmRequests().size() > llmBefore
            && follower.events().stream().anyMatch(e -> "output".equals(e.type())), Duration.ofMinutes(1),
            "the second cell to print and wait for its llm() call, as followed on replica 2");
        cluster.kill(0);
        gate.complete(null);
        JsonObject end = awaitEnd(id, t);
        assertThat(end.getString("status")).as(end.encode()).isEqualTo("succeeded");
        assertThat(end.getString("answer")).isEqualTo(baseline.getString("answer"));
        assertThat(end.getString("program")).isEqualTo(baseline.getString("program"));
        assertThat(end.getInteger("moves")).isEqualTo(1);
        assertThat(asked(token)).as("model turns asked: none recorded was asked again")
            .isEqualTo(baseline.getLong("asked"));
        follower.done().get(1, TimeUnit.MINUTES);
        List<SseClient.Event> events = follower.events();
        seenOnce(events, steps.size());
        String printed = ofType(events, "output").stream().filter(e -> e.json().getInteger("step") == 2)
            .map(e -> e.json().getString("text")).reduce("", String::concat);
        assertThat(printed).isEqualTo("before\n42 ok\n".replace("ok", printedReply(baseline)));
      }
    }
  }

  /** What llm('say ok') answered in the baseline (the scripted model's reply), as its last cell printed it. */
  private static String printedReply(JsonObject baseline) {
    String answer = baseline.getString("answer");
    return answer.substring(answer.indexOf("84 ") + 3);
  }

  @Test
  @DisplayName("a replica killed while its analysis of 5 finished cells waits for the model: another replica rebuilds"
      + " the 5 cells and asks only the unrecorded turn again")
  void killedWhileWaitingForTheModel() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("waiting-" + UUID.randomUUID());
    List<String> steps = List.of("a = [1]", "a.append(len(a) + 1)", "a.append(sum(a))", "d = {'k': a}",
        "print(d['k'], list({'x', 'y', 'z', 'w'}))");
    JsonObject baseline = uninterrupted(t, steps);
    String token = plans.plan(steps);
    ScriptedModelServer.Held held = plans.hold(token, steps.size());
    try (SseClient own = SseClient.post(cluster.replicaUrl(0), "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "Waiting " + token).put("stream", true))) {
      assertThat(own.status(Duration.ofSeconds(90))).isEqualTo(200);
      String id = own.header("X-Analysis-Id", Duration.ofSeconds(5));
      try (SseClient follower = SseClient.get(cluster.replicaUrl(1), "/v1/analyses/" + id + "/events", t.apiKey(), 0)) {
        held.asked().get(2, TimeUnit.MINUTES);
        long killedAt = System.currentTimeMillis();
        cluster.kill(0);
        JsonObject end = awaitEnd(id, t);
        assertThat(end.getString("status")).as(end.encode()).isEqualTo("succeeded");
        assertThat(end.getString("answer")).isEqualTo(baseline.getString("answer"));
        assertThat(end.getString("program")).isEqualTo(baseline.getString("program"));
        // The held turn was never answered, so never recorded: it alone is asked again.
        assertThat(asked(token)).isEqualTo(baseline.getLong("asked") + 1);
        follower.done().get(1, TimeUnit.MINUTES);
        seenOnce(follower.events(), steps.size());
        SseClient.Event moved = ofType(follower.events(), "moved").get(0);
        System.out.printf("killed while waiting for the model, 5 cells: moved event %d ms after the kill"
            + " (lease 6 s)%n", moved.atMs() - killedAt);
      }
    }
  }

  @Test
  @DisplayName("a drained replica hands its analysis off at once: it ends on another replica, not cancelled")
  void drainHandsOff() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("drain-" + UUID.randomUUID());
    List<String> steps = List.of("y = 'kept'", "print(y)");
    String token = plans.plan(steps);
    ScriptedModelServer.Held held = plans.hold(token, 1);
    try (SseClient own = SseClient.post(cluster.replicaUrl(0), "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "Drained " + token).put("stream", true))) {
      assertThat(own.status(Duration.ofSeconds(90))).isEqualTo(200);
      String id = own.header("X-Analysis-Id", Duration.ofSeconds(5));
      try (SseClient follower = SseClient.get(cluster.replicaUrl(2), "/v1/analyses/" + id + "/events", t.apiKey(), 0)) {
        held.asked().get(2, TimeUnit.MINUTES);
        long drainedAt = System.currentTimeMillis();
        CompletableFuture<Integer> stopped = CompletableFuture.supplyAsync(() -> {
          try {
            return cluster.stop(0);
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
        JsonObject end = awaitEnd(id, t);
        assertThat(end.getString("status")).as(end.encode()).isEqualTo("succeeded");
        assertThat(end.getString("answer")).isEqualTo("the output was kept");
        assertThat(stopped.get(2, TimeUnit.MINUTES)).isZero();
        follower.done().get(1, TimeUnit.MINUTES);
        seenOnce(follower.events(), steps.size());
        SseClient.Event moved = ofType(follower.events(), "moved").get(0);
        System.out.printf("drained while waiting for the model: moved event %d ms after SIGTERM%n",
            moved.atMs() - drainedAt);
      }
    }
  }

  @Test
  @DisplayName("a follow-up on another replica reads the first question's variables; one whose rebuild diverges ends"
      + " failed with RebuildDiverged naming the cell")
  void followUps() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("follow-up-" + UUID.randomUUID());
    String first = plans.plan(List.of("total = 6 * 7", "print(total)"));
    GatewayCluster.Response r = cluster.send(cluster.replicaUrl(0), "POST", "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "First " + first).encode(), FINISH);
    assertThat(r.json().getString("status")).as(r.body()).isEqualTo("succeeded");
    String id = r.json().getString("id");
    String next = plans.plan(List.of("print(total + 1)"));
    GatewayCluster.Response followed = cluster.send(cluster.replicaUrl(1), "POST", "/v1/analyses/" + id + "/follow-ups",
        t.apiKey(), new JsonObject().put("question", "And one more? " + next).encode(), FINISH);
    assertThat(followed.status()).as(followed.body()).isEqualTo(200);
    assertThat(followed.json().getString("status")).as(followed.body()).isEqualTo("succeeded");
    assertThat(followed.json().getString("answer")).isEqualTo("the output was 43");
    assertThat(followed.json().getString("follows")).isEqualTo(id);
    // The first question's turns were given again from its record, not asked.
    assertThat(asked(first, next)).isEqualTo(3);
    assertThat(asked(next)).as("the follow-up's own turns: its cell, its answer").isEqualTo(2);

    // Its record altered (the second cell's output), the rebuild cannot be trusted.
    try (Connection c = cluster.database().jdbc();
        PreparedStatement s = c.prepareStatement("UPDATE analysis_events SET body = replace(body, '42', '41')"
            + " WHERE analysis_id = ?::uuid AND type = 'cell_result'")) {
      s.setString(1, id);
      assertThat(s.executeUpdate()).isEqualTo(2);
    }
    String third = plans.plan(List.of("print(total)"));
    GatewayCluster.Response diverged = cluster.send(cluster.replicaUrl(2), "POST", "/v1/analyses/" + id + "/follow-ups",
        t.apiKey(), new JsonObject().put("question", "Again? " + third).encode(), FINISH);
    assertThat(diverged.json().getString("status")).as(diverged.body()).isEqualTo("failed");
    assertThat(diverged.json().getJsonObject("error").getString("type")).isEqualTo("RebuildDiverged");
    assertThat(diverged.json().getJsonObject("error").getString("message")).contains("step 2");
    assertThat(asked(third)).as("a diverged rebuild asks the model nothing").isZero();

    GatewayCluster.Response unknown = cluster.send("POST", "/v1/analyses/" + UUID.randomUUID() + "/follow-ups",
        t.apiKey(), new JsonObject().put("question", "?").encode());
    assertThat(unknown.status()).isEqualTo(404);
    GatewayCluster.Response failedFirst = cluster.send("POST", "/v1/analyses/" + diverged.json().getString("id")
        + "/follow-ups", t.apiKey(), new JsonObject().put("question", "?").encode());
    assertThat(failedFirst.status()).as(failedFirst.body()).isEqualTo(409);
    assertThat(failedFirst.json().getJsonObject("error").getString("code")).isEqualTo("not_answered");
  }

  @Test
  @DisplayName("property: random sequences of cells and callbacks, rebuilt on another replica for a follow-up,"
      + " give the namespace the first run left")
  void rebuiltNamespaceIsTheRecordedOne() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("namespace-" + UUID.randomUUID());
    long seed = System.nanoTime();
    java.util.Random random = new java.util.Random(seed);
    for (int run = 0; run < 5; run++) {
      List<String> cells = new ArrayList<>();
      List<String> names = new ArrayList<>();
      int n = 2 + random.nextInt(5);
      for (int c = 0; c < n; c++) {
        String name = "v" + c;
        String other = names.isEmpty() ? "0" : names.get(random.nextInt(names.size()));
        cells.add(switch (random.nextInt(6)) {
          case 0 -> name + " = " + random.nextInt(1000) + " + len(str(" + other + "))";
          case 1 -> name + " = await llm('word " + random.nextInt(100) + "')";
          case 2 -> name + " = [d['id'] for d in await list_documents()] + [" + other + "]";
          case 3 -> name + " = len(await search('term " + random.nextInt(100) + "', limit=" + (1 + random.nextInt(5)) + "))";
          case 4 -> name + " = {str(" + other + "): [" + random.nextInt(9) + ", 'x']}";
          default -> name + " = list({'a', 'b', str(" + other + ")})\nprint(" + name + ")";
        });
        names.add(name);
      }
      String dump = "print(repr([" + String.join(", ", names) + "]))";
      List<String> first = new ArrayList<>(cells);
      first.add(dump);
      String token = plans.plan(first);
      GatewayCluster.Response r = cluster.send(cluster.replicaUrl(run % 3), "POST", "/v1/analyses", t.apiKey(),
          new JsonObject().put("question", "Namespace " + token).encode(), FINISH);
      assertThat(r.json().getString("status")).as("seed %d, cells %s: %s", seed, first, r.body()).isEqualTo("succeeded");
      String next = plans.plan(List.of(dump));
      GatewayCluster.Response f = cluster.send(cluster.replicaUrl((run + 1) % 3), "POST", "/v1/analyses/"
          + r.json().getString("id") + "/follow-ups", t.apiKey(), new JsonObject().put("question", "Dump " + next).encode(), FINISH);
      assertThat(f.json().getString("status")).as("seed %d, cells %s: %s", seed, first, f.body()).isEqualTo("succeeded");
      assertThat(f.json().getString("answer")).as("seed %d, cells %s", seed, first).isEqualTo(r.json().getString("answer"));
    }
  }

  /**
   * A running analysis as a replica leaves it when it dies within its first 50 ms (the row written,
   * no event yet), held by replica {@code holder}.
   */
  private UUID orphan(GatewayCluster.Tenant t, String question, UUID holder) throws Exception {
    UUID id = UUID.randomUUID();
    try (Connection c = cluster.database().jdbc();
        PreparedStatement s = c.prepareStatement("INSERT INTO analyses (id, tenant_id, question, scope, preload,"
            + " budgets, model, status, replica_id, deadline_at) VALUES (?::uuid, ?::uuid, ?, '{}', '{}', ?::jsonb,"
            + " 'scripted', 'running', ?::uuid, now() + interval '5 minutes')")) {
      s.setString(1, id.toString());
      s.setString(2, t.id().toString());
      s.setString(3, question);
      s.setString(4, dev.quarry.agent.Budgets.DEFAULTS.toJson().encode());
      s.setString(5, holder.toString());
      assertThat(s.executeUpdate()).isEqualTo(1);
    }
    return id;
  }

  @Test
  @DisplayName("an analysis whose replica died before its first event was stored is taken over and runs from its"
      + " start, its stream starting with 'started'")
  void takenOverBeforeItsFirstEvent() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("first-event-" + UUID.randomUUID());
    String token = plans.plan(List.of("print('from the start')"));
    UUID id = orphan(t, "Orphaned " + token, UUID.randomUUID());
    JsonObject end = awaitEnd(id.toString(), t);
    assertThat(end.getString("status")).as(end.encode()).isEqualTo("succeeded");
    assertThat(end.getString("answer")).isEqualTo("the output was from the start");
    assertThat(end.getInteger("moves")).isEqualTo(1);
    try (SseClient events = SseClient.get(cluster.balancerUrl(), "/v1/analyses/" + id + "/events", t.apiKey(), 0)) {
      events.done().get(1, TimeUnit.MINUTES);
      assertThat(events.events()).extracting(SseClient.Event::type).startsWith("started", "model_turn", "code")
          .doesNotContain("moved").endsWith("answer");
    }
  }

  @Test
  @DisplayName("a cancel asked while no live replica holds the analysis is not lost: the replica taking it over"
      + " ends it cancelled")
  void cancelWhileNobodyHoldsIt() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("cancel-orphan-" + UUID.randomUUID());
    String token = plans.plan(List.of("print('should not run')"));
    UUID dying = UUID.randomUUID();
    try (Connection c = cluster.database().jdbc();
        PreparedStatement s = c.prepareStatement("INSERT INTO replicas (id, gateway_id, lease_until)"
            + " VALUES (?::uuid, 'about-to-die', now() + interval '3 seconds')")) {
      s.setString(1, dying.toString());
      s.executeUpdate();
    }
    UUID id = orphan(t, "Cancelled " + token, dying);
    GatewayCluster.Response cancel = cluster.send("POST", "/v1/analyses/" + id + "/cancel", t.apiKey(), null);
    assertThat(cancel.status()).as(cancel.body()).isEqualTo(202);
    JsonObject end = awaitEnd(id.toString(), t);
    assertThat(end.getString("status")).as(end.encode()).isEqualTo("cancelled");
    assertThat(asked(token)).as("a cancelled analysis asks the model nothing").isZero();
  }

  @Test
  @DisplayName("all three replicas drained and restarted one by one under a steady load of analyses: none fails")
  void rollingRestart() throws Exception {
    GatewayCluster.Tenant t = cluster.createTenant("rolling-" + UUID.randomUUID());
    cluster.setQuotas(t.id(), new JsonObject().put("concurrent_analyses", 50)
        .put("concurrent_sandboxes", 50).put("requests_per_minute", 6000));
    List<String> steps = List.of("v = [1, 2, 3]", "v.append(await llm('more'))", "print(len(v))");
    java.util.concurrent.atomic.AtomicBoolean load = new java.util.concurrent.atomic.AtomicBoolean(true);
    List<String> started = java.util.Collections.synchronizedList(new ArrayList<>());
    List<SseClient> streams = java.util.Collections.synchronizedList(new ArrayList<>());
    // A steady load the cluster serves: three analyses running at any time (within one tenant's share of
    // one replica's sandboxes, so that the two replicas left during a restart hold them all), the next
    // started as one ends.
    java.util.concurrent.Semaphore running = new java.util.concurrent.Semaphore(3);
    Thread generator = Thread.ofVirtual().start(() -> {
      while (load.get()) {
        try {
          running.acquire();
        } catch (InterruptedException e) {
          return;
        }
        SseClient stream = SseClient.post(cluster.balancerUrl(), "/v1/analyses", t.apiKey(),
            new JsonObject().put("question", "Rolling " + plans.plan(steps)).put("stream", true));
        streams.add(stream);
        try {
          // One refused by a draining replica (503 shutting_down) is not started: the next is sent.
          if (stream.status(Duration.ofSeconds(30)) == 200) {
            String id = stream.header("X-Analysis-Id", Duration.ofSeconds(5));
            started.add(id);
            // Its place is free once it has ended (through whichever replica), or its stream has.
            CompletableFuture.runAsync(() -> awaitEnd(id, t)).whenComplete((v, e) -> running.release());
          } else {
            running.release();
          }
        } catch (Exception e) {
          running.release();
        }
      }
    });
    try {
      for (int i = 0; i < cluster.size(); i++) {
        int before = started.size();
        Await.until(() -> started.size() >= before + 3, Duration.ofMinutes(1), "analyses to start under load");
        assertThat(cluster.stop(i)).isZero();
        cluster.restart(i);
      }
    } finally {
      load.set(false);
      generator.join(Duration.ofMinutes(1));
    }
    try {
      assertThat(started).hasSizeGreaterThan(6);
      List<String> ends = new ArrayList<>();
      for (String id : List.copyOf(started)) {
        JsonObject end = awaitEnd(id, t);
        ends.add(end.getString("status") + " " + end.getInteger("moves") + " " + id
            + (end.getValue("error") == null ? "" : " " + end.getValue("error")));
      }
      assertThat(ends).allMatch(e -> e.startsWith("succeeded "), "every analysis succeeded");
      System.out.printf("rolling restart of 3 replicas: %d analyses, %d moved, all succeeded%n", ends.size(),
          ends.stream().filter(e -> !e.startsWith("succeeded 0 ")).count());
    } finally {
      streams.forEach(SseClient::close);
    }
  }

}
