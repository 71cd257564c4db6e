package dev.quarry.bench;

import dev.quarry.agent.ScriptedModelServer;
import dev.quarry.support.Await;
import dev.quarry.support.GatewayCluster;
import dev.quarry.support.ModelPlans;
import dev.quarry.support.SseClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * How soon a running analysis goes on after its replica is lost (issue 35): three replicas behind
 * HAProxy at the default lease ({@code QUARRY_REPLICA_LEASE_SECONDS}, 15 s), analyses of 1, 5 and 20
 * finished cells started together on replica 0 and held at the model after their cells; replica 0
 * killed ({@code kill -9}), and from each analysis' stored events (their {@code at}: every process
 * runs on this machine) the kill to its {@code moved} event, from that to its next new step (the
 * first {@code model_turn} or {@code code} after it: the sandbox rebuilt, its cells run again, the
 * unrecorded turn asked again) and the kill to that step. Then the same for a drain (SIGTERM) of 5
 * cells, which hands its analyses off at once; then how long a follow-up to a finished 5-cell
 * analysis takes to its first {@code code} event on another replica against a new analysis' first.
 */
final class ClusterTakeoverBench {
  private static final int PER_ROUND = Integer.getInteger("bench.cluster.takeover.analyses", 5);
  private static final int FOLLOW_UPS = Integer.getInteger("bench.cluster.takeover.followups", 10);
  /** The replicas' lease; 15 s is the gateway's default and is not set unless another is asked for. */
  private static final int LEASE = Integer.getInteger("bench.cluster.takeover.lease", 15);
  private static final int[] SIZES = {1, 5, 20};
  private static final Duration LIMIT = Duration.ofMinutes(3);

  /** One analysis moved: from the kill (or SIGTERM) to its moved event, from that to its next step, kill to step; ms. */
  private record Move(long toMoved, long rebuild, long toStep) {}

  /** One round's moves, and the analyses that did not end as an uninterrupted one would (none expected). */
  private record Round(String label, int cells, List<Move> moves, List<String> wrong) {}

  private final ModelPlans plans = new ModelPlans();

  String run() throws Exception {
    Vertx vertx = Vertx.vertx();
    ScriptedModelServer model = ScriptedModelServer.start(vertx);
    model.otherwise(plans::reply);
    GatewayCluster.Builder builder = GatewayCluster.builder().replicas(3)
        .setting("QUARRY_MODEL_BASE_URL", model.baseUrl())
        .setting("QUARRY_MODEL_API_KEY", "bench-key")
        .setting("QUARRY_MODEL", "bench-scripted")
        .setting("QUARRY_SANDBOX_IMAGE", System.getenv().getOrDefault("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest"))
        .setting("QUARRY_SANDBOX_POOL_PER_TENANT", "2")
        .setting("QUARRY_SANDBOX_TENANT_SHARE_PERCENT", "100");
    if (LEASE != 15) {
      builder.setting("QUARRY_REPLICA_LEASE_SECONDS", Integer.toString(LEASE));
    }
    try (GatewayCluster cluster = builder.start()) {
      GatewayCluster.Tenant t = cluster.createTenant("bench-takeover");
      cluster.setQuotas(t.id(), new JsonObject().put("requests_per_minute", 100_000).put("concurrent_analyses", 64)
          .put("concurrent_sandboxes", 1024).put("callbacks_per_minute", 100_000));
      for (int r = 0; r < cluster.size(); r++) {
        finish(cluster, t, r, plans.plan(List.of("w = 1\nprint(w)"))); // warm-up: each replica's pool
      }
      List<Round> rounds = new ArrayList<>();
      for (int n : SIZES) {
        rounds.add(round(cluster, t, n, true));
      }
      rounds.add(round(cluster, t, 5, false));
      if (!cluster.alive(0)) {
        cluster.restart(0);
      }
      Map<String, List<Long>> first = followUps(cluster, t);
      return report(rounds, first);
    } finally {
      model.close();
      vertx.close().await();
    }
  }

  /** {@value #PER_ROUND} analyses of {@code cells} cells held on replica 0, which is then killed or drained. */
  private Round round(GatewayCluster cluster, GatewayCluster.Tenant t, int cells, boolean kill) throws Exception {
    if (!cluster.alive(0)) {
      cluster.restart(0);
    }
    long began = System.nanoTime();
    List<String> steps = new ArrayList<>();
    for (int i = 0; i < cells; i++) {
      steps.add("a" + i + " = " + i + (i % 5 == 4 ? "\nprint('a" + i + "', a" + i + ")" : ""));
    }
    steps.add("print('after', a0 + a" + (cells - 1) + ")"); // the step after the move
    List<SseClient> streams = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    List<CompletableFuture<JsonObject>> held = new ArrayList<>();
    String label = (kill ? "SIGKILL" : "SIGTERM (drain)") + ", " + cells + (cells == 1 ? " cell" : " cells");
    try {
      for (int k = 0; k < PER_ROUND; k++) {
        String token = plans.plan(steps);
        ScriptedModelServer.Held hold = plans.hold(token, cells);
        SseClient own = SseClient.post(cluster.replicaUrl(0), "/v1/analyses", t.apiKey(), new JsonObject()
            .put("question", "Take-over, " + label + ", " + k + ": " + token).put("stream", true)
            .put("budgets", new JsonObject().put("model_turns", 2 * cells + 4).put("execute_code_calls", 2 * cells + 4)));
        streams.add(own);
        if (own.status(Duration.ofSeconds(90)) != 200) {
          own.done().get(1, TimeUnit.MINUTES);
          throw new IllegalStateException("analysis refused: " + own.body());
        }
        ids.add(own.header("X-Analysis-Id", Duration.ofSeconds(5)));
        held.add(hold.asked());
      }
      Await.until(() -> {
        for (int k = 0; k < PER_ROUND; k++) {
          if (streams.get(k).done().isDone() && !held.get(k).isDone()) {
            throw new IllegalStateException("analysis " + ids.get(k) + " ended before its hold: "
                + streams.get(k).events().stream().map(e -> e.type() + " " + e.data()).toList());
          }
        }
        return held.stream().allMatch(CompletableFuture::isDone);
      }, LIMIT, label + ": every analysis at its hold");
      // Held: each asked the model, and a replica stores an analysis' events before it asks.
      long t0 = System.currentTimeMillis();
      CompletableFuture<Integer> stopped = null;
      if (kill) {
        cluster.kill(0);
      } else {
        stopped = CompletableFuture.supplyAsync(() -> {
          try {
            return cluster.stop(0);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
          }
        });
      }
      List<Move> moves = new ArrayList<>();
      List<String> wrong = new ArrayList<>();
      for (String id : ids) {
        JsonObject end = awaitEnd(cluster, t, id);
        List<SseClient.Event> events = events(cluster, t, id);
        int at = -1;
        for (int i = 0; i < events.size() && at < 0; i++) {
          at = "moved".equals(events.get(i).type()) ? i : -1;
        }
        SseClient.Event next = at < 0 ? null : events.subList(at + 1, events.size()).stream()
            .filter(e -> "model_turn".equals(e.type()) || "code".equals(e.type())).findFirst().orElse(null);
        String expected = "the output was after " + (cells - 1);
        if (!"succeeded".equals(end.getString("status")) || !expected.equals(end.getString("answer"))
            || end.getInteger("moves", 0) != 1 || next == null
            || events.get(at).json().getInteger("steps_to_rebuild", -1) != cells) {
          wrong.add(id + ": " + end.getString("status") + ", " + end.getValue("answer") + ", moves " + end.getValue("moves")
              + ", events " + events.stream().map(SseClient.Event::type).toList());
          continue;
        }
        long moved = events.get(at).atMs();
        moves.add(new Move(moved - t0, next.atMs() - moved, next.atMs() - t0));
      }
      if (stopped != null && stopped.get(2, TimeUnit.MINUTES) != 0) {
        wrong.add("the drained replica exited with " + stopped.get());
      }
      Round round = new Round(label, cells, moves, wrong);
      System.out.printf(Locale.ROOT, "%s: %s (round: %.0f s)%s%n", label, figures(round), (System.nanoTime() - began) / 1e9,
          wrong.isEmpty() ? "" : "; not as expected: " + wrong);
      return round;
    } finally {
      streams.forEach(SseClient::close);
    }
  }

  /**
   * Time from sending to the first {@code code} event (received) of a follow-up to a finished 5-cell
   * analysis and of a new analysis, both streamed from replica 1, in turns; the first analyses ran on replica 0.
   */
  private Map<String, List<Long>> followUps(GatewayCluster cluster, GatewayCluster.Tenant t) throws Exception {
    List<String> steps = List.of("a0 = 0", "a1 = 1", "a2 = 2", "a3 = 3", "a4 = 4\nprint('a4', a4)");
    List<String> firsts = java.util.Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(5);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int i = 0; i < FOLLOW_UPS; i++) {
        runs.add(pool.submit(() -> {
          firsts.add(finish(cluster, t, 0, plans.plan(steps)));
          return null;
        }));
      }
      for (Future<?> f : runs) {
        f.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    Map<String, List<Long>> out = new LinkedHashMap<>();
    out.put("fresh", new ArrayList<>());
    out.put("follow-up", new ArrayList<>());
    for (int i = 0; i < FOLLOW_UPS; i++) {
      for (String kind : i % 2 == 0 ? List.of("follow-up", "fresh") : List.of("fresh", "follow-up")) {
        boolean follow = kind.equals("follow-up");
        String token = plans.plan(List.of(follow ? "print(a0 + a4)" : "b = 4\nprint(b)"));
        String path = follow ? "/v1/analyses/" + firsts.get(i) + "/follow-ups" : "/v1/analyses";
        out.get(kind).add(firstCode(cluster, t, path, (follow ? "And the sum? " : "A new one: ") + token,
            follow ? firsts.get(i) : null)); // returns once that analysis has ended
      }
    }
    System.out.printf(Locale.ROOT, "first code event: new analysis %s; follow-up to 5 cells %s%n",
        ms(out.get("fresh")), ms(out.get("follow-up")));
    return out;
  }

  /** Sends a streamed analysis (or follow-up) to replica 1; ms from sending to its first code event's arrival. */
  private static long firstCode(GatewayCluster cluster, GatewayCluster.Tenant t, String path, String question,
      String follows) throws Exception {
    long t0 = System.currentTimeMillis();
    try (SseClient s = SseClient.post(cluster.replicaUrl(1), path, t.apiKey(),
        new JsonObject().put("question", question).put("stream", true))) {
      if (s.status(Duration.ofSeconds(90)) != 200) {
        s.done().get(1, TimeUnit.MINUTES);
        throw new IllegalStateException(path + " refused: " + s.body());
      }
      s.done().get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      List<SseClient.Event> events = s.events();
      SseClient.Event code = events.stream().filter(e -> "code".equals(e.type())).findFirst().orElse(null);
      SseClient.Event started = events.isEmpty() ? null : events.get(0);
      if (code == null || !"answer".equals(events.get(events.size() - 1).type()) || started == null
          || (follows != null && !follows.equals(started.json().getString("follows")))) {
        throw new IllegalStateException(path + " did not run as expected: "
            + events.stream().map(e -> e.type() + " " + e.data()).toList());
      }
      return code.receivedAtMs() - t0;
    }
  }

  /** Runs a plan's analysis to its end on one replica (not streamed); its id. */
  private static String finish(GatewayCluster cluster, GatewayCluster.Tenant t, int replica, String token) {
    GatewayCluster.Response r = cluster.send(cluster.replicaUrl(replica), "POST", "/v1/analyses", t.apiKey(),
        new JsonObject().put("question", "First " + token).encode(), LIMIT);
    if (r.status() != 200 || !"succeeded".equals(r.json().getString("status"))) {
      throw new IllegalStateException("analysis on replica " + replica + ": " + r.status() + " " + r.body());
    }
    return r.json().getString("id");
  }

  private static JsonObject awaitEnd(GatewayCluster cluster, GatewayCluster.Tenant t, String id) {
    JsonObject[] end = new JsonObject[1];
    Await.until(() -> {
      GatewayCluster.Response r = cluster.send(cluster.replicaUrl(1), "GET", "/v1/analyses/" + id, t.apiKey(), null);
      end[0] = r.status() == 200 ? r.json() : null;
      return end[0] != null && !"running".equals(end[0].getString("status"));
    }, LIMIT, "analysis " + id + " to end");
    return end[0];
  }

  /** An ended analysis' stored events, read through replica 1. */
  private static List<SseClient.Event> events(GatewayCluster cluster, GatewayCluster.Tenant t, String id) throws Exception {
    try (SseClient s = SseClient.get(cluster.replicaUrl(1), "/v1/analyses/" + id + "/events", t.apiKey(), 0)) {
      s.done().get(1, TimeUnit.MINUTES);
      return s.events();
    }
  }

  /**
   * The model: each analysis answered by the plan whose token its latest question holds: the next
   * cell while cells are left, then the answer quoting the last output. A plan held at turn n leaves
   * its n-th turn unanswered the first time it is asked (the replica is lost meanwhile); asked again
   * (the taker), it is answered.
   */
  private static Percentiles pct(List<Long> ms) {
    return ms.isEmpty() ? null : Percentiles.of(ms.stream().mapToDouble(Long::doubleValue).toArray());
  }

  private static String ms(List<Long> ms) {
    Percentiles p = pct(ms);
    return p == null ? "no samples" : String.format(Locale.ROOT, "p50 %.0f ms, p95 %.0f ms (%d)", p.p50(), p.p95(), p.count());
  }

  private static String seconds(List<Long> ms) {
    Percentiles p = pct(ms);
    return p == null ? "– | –" : String.format(Locale.ROOT, "%.1f | %.1f", p.p50() / 1000, p.p95() / 1000);
  }

  private static String figures(Round r) {
    return String.format(Locale.ROOT, "%d of %d moved; to moved %s s, moved to next step %s s, to next step %s s (p50 | p95)",
        r.moves().size(), PER_ROUND, seconds(r.moves().stream().map(Move::toMoved).toList()),
        seconds(r.moves().stream().map(Move::rebuild).toList()), seconds(r.moves().stream().map(Move::toStep).toList()));
  }

  private static double p50(List<Long> ms) {
    Percentiles p = pct(ms);
    return p == null ? Double.NaN : p.p50();
  }

  private static String report(List<Round> rounds, Map<String, List<Long>> first) {
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, "Three replicas behind HAProxy, replica lease %d s%s (renewed every third of"
        + " it; the others look for lapsed ones every 2 s). Each round starts %d analyses at once on replica 0 (a"
        + " scripted model: cells `a{i} = {i}`, every fifth printing), each held at the model after its cells, then"
        + " kills replica 0 (`kill -9`) or drains it (SIGTERM); replica 0 is started again before the next round."
        + " From each analysis' stored events (`at`, one machine's clock): the signal to its `moved` event, from"
        + " `moved` to its next new step (the first `model_turn` or `code` after it: a sandbox, the recorded cells run"
        + " again, the unanswered turn asked again) and the signal to that step. Seconds, nearest rank: with %d"
        + " analyses a round, p95 is the slowest.%n%n", LEASE, LEASE == 15 ? " (the default)" : "", PER_ROUND, PER_ROUND));
    md.append("| replica 0 lost by | analyses moved | signal → `moved` p50 | p95 | `moved` → next step p50 | p95"
        + " | signal → next step p50 | p95 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Round r : rounds) {
      md.append(String.format(Locale.ROOT, "| %s | %d of %d | %s | %s | %s |%n", r.label(), r.moves().size(), PER_ROUND,
          seconds(r.moves().stream().map(Move::toMoved).toList()), seconds(r.moves().stream().map(Move::rebuild).toList()),
          seconds(r.moves().stream().map(Move::toStep).toList())));
    }
    List<String> wrong = rounds.stream().flatMap(r -> r.wrong().stream()).toList();
    md.append(String.format(Locale.ROOT, "%nEvery analysis moved once and ended with the answer of an uninterrupted"
        + " run: %s.%n", wrong.isEmpty() ? "yes" : "NO (" + String.join("; ", wrong) + ")"));
    md.append(String.format(Locale.ROOT, "%nFirst step on replica 1, from sending a streamed request to its first"
        + " `code` event, in turns (%d each): a new analysis, and a follow-up to a finished 5-cell analysis of replica 0"
        + " (its sandbox rebuilt: the 5 cells run again first).%n%n", FOLLOW_UPS));
    md.append("| request | samples | p50 ms | p95 ms |\n|---|---:|---:|---:|\n");
    for (Map.Entry<String, List<Long>> e : first.entrySet()) {
      Percentiles p = pct(e.getValue());
      md.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %.0f |%n", e.getKey().equals("fresh")
          ? "`POST /v1/analyses` (a new analysis)" : "`POST /v1/analyses/{id}/follow-ups` (5 cells rebuilt)",
          p.count(), p.p50(), p.p95()));
    }
    Round five = rounds.stream().filter(r -> r.label().startsWith("SIGKILL") && r.cells() == 5).findFirst().orElseThrow();
    Round drain = rounds.stream().filter(r -> r.label().startsWith("SIGTERM")).findFirst().orElseThrow();
    double takeOver = p50(five.moves().stream().map(Move::toStep).toList()) / 1000;
    double handOff = p50(drain.moves().stream().map(Move::toStep).toList()) / 1000;
    double followUp = p50(first.get("follow-up"));
    md.append(String.format(Locale.ROOT, "%nTargets: take-over of a 5-cell analysis at most 15 s past the lease's"
        + " lapse at the p50 (kill → next step ≤ %d s): %.1f s, %s; drain hand-off at most 3 s at the p50 (SIGTERM"
        + " → next step): %.1f s, %s; a follow-up to a 5-cell analysis at its first step within 2 s at the p50:"
        + " %.0f ms, %s (%.0f ms more than a new analysis'). Baseline (before issue 35, not run): a killed replica's"
        + " analysis stayed `running` until its wall budget plus 10 minutes (15 min with the default 300 s budget)"
        + " and then failed `GatewayLost`; a drain cancelled its analyses after 120 s; an answered analysis took no"
        + " follow-up.%n", LEASE + 15, takeOver, takeOver <= LEASE + 15 ? "met" : "NOT met", handOff,
        handOff <= 3 ? "met" : "NOT met", followUp, followUp <= 2000 ? "met" : "NOT met",
        followUp - p50(first.get("fresh"))));
    return md.toString();
  }
}
