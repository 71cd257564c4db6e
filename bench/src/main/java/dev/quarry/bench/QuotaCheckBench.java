package dev.quarry.bench;

import dev.quarry.config.Quota;
import dev.quarry.store.Database;
import dev.quarry.store.Replicas;
import dev.quarry.tenancy.Places;
import dev.quarry.tenancy.RateLimits;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.jdbc.PrimaryKeyMapper;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;
import io.github.bucket4j.postgresql.PostgreSQLSelectForUpdateBasedProxyManager;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * What a rate quota check costs a request, measured on an event loop as the gateway makes it: from
 * asking to the answer, one check after another (so each sees an idle database), then 3 replicas
 * with 16 requests in flight each. The options (decision record 0070): the in-process bucket each
 * replica had before (the baseline), the gateway's batched draw on a bucket in PostgreSQL
 * ({@link RateLimits}) at two limits, the same with a batch of one (a database round trip per
 * request), and Bucket4j's PostgreSQL backend (JDBC, blocking: run on a worker as the gateway
 * would have to). Also the cost of a request body's place, which is a round trip per body.
 */
final class QuotaCheckBench {
  private static final int SEQUENTIAL = Integer.getInteger("bench.cluster.checks", 4000);
  private static final int WARM_UP = Integer.getInteger("bench.cluster.warmup", 2000);
  private static final int IN_FLIGHT = 16;
  private static final int CONCURRENT = Integer.getInteger("bench.cluster.concurrent", 6000);

  private final Vertx vertx = Vertx.vertx();

  /** Latencies in ms of one series. */
  private record Series(String option, Percentiles sequential, Percentiles concurrent, double perSecond) {}

  String run() throws Exception {
    List<Series> rows = new ArrayList<>();
    Percentiles bodies;
    try (BenchDatabase db = BenchDatabase.fresh("cluster_checks", true)) {
      List<Pool> pools = new ArrayList<>();
      List<Replicas> replicas = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        Pool pool = Database.pool(vertx, db.config(), 8);
        Replicas r = new Replicas(vertx, pool, "bench-checks-" + i, Duration.ofSeconds(15));
        r.start().await();
        pools.add(pool);
        replicas.add(r);
      }
      // 1. The baseline: one bucket in this process, as each replica had.
      InProcessBucket local = new InProcessBucket(1_000_000_000L, System.currentTimeMillis());
      rows.add(measure("in-process bucket per replica (before; baseline)",
          () -> local.take(System.currentTimeMillis()) == 0 ? Future.succeededFuture() : Future.failedFuture("empty"),
          i -> () -> local.take(System.currentTimeMillis()) == 0 ? Future.succeededFuture() : Future.failedFuture("empty")));
      // 2. The gateway's: tokens drawn from PostgreSQL in batches of limit / (20 x 3 replicas). At the
      // default quota (600 a minute, batches of 10) over 40 tenants in turn, so that no bucket runs dry
      // in the run; and one tenant with a large quota (batches of 1,666).
      List<RateLimits> three = pools.stream().map(p -> new RateLimits(p, () -> 3)).toList();
      List<UUID> tenants = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        tenants.add(tenant(db));
      }
      java.util.concurrent.atomic.AtomicInteger turn = new java.util.concurrent.atomic.AtomicInteger();
      rows.add(measure("PostgreSQL bucket, batches of 10 (the default 600/min over 40 tenants, 3 replicas)",
          () -> three.get(0).take(tenants.get(turn.getAndIncrement() % 40), Quota.REQUESTS_PER_MINUTE, 600),
          i -> () -> three.get(i).take(tenants.get(turn.getAndIncrement() % 40), Quota.REQUESTS_PER_MINUTE, 600)));
      UUID large = tenant(db);
      rows.add(measure("PostgreSQL bucket, batches of 1,666 (one tenant at 100,000/min, 3 replicas)",
          () -> three.get(0).take(large, Quota.REQUESTS_PER_MINUTE, 100_000),
          i -> () -> three.get(i).take(large, Quota.REQUESTS_PER_MINUTE, 100_000)));
      // 3. The same bucket and statement with a round trip per request (no batch).
      UUID single = tenant(db);
      String take = "SELECT granted, left_over FROM take_rate_tokens($1, $2, $3, $4)";
      java.util.function.IntFunction<Supplier<Future<?>>> perRequest = i -> () -> Database.inTenantOneTrip(pools.get(i),
          single, conn -> conn.preparedQuery(take).execute(io.vertx.sqlclient.Tuple.of(single, "requests_per_minute",
              1e8, 1)));
      rows.add(measure("PostgreSQL bucket, a round trip per request", perRequest.apply(0), perRequest));
      // 4. Bucket4j's PostgreSQL backend (SELECT ... FOR UPDATE), over JDBC on a worker thread.
      try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE bucket4j_buckets (id text PRIMARY KEY, state bytea)");
      }
      List<com.zaxxer.hikari.HikariDataSource> sources = new ArrayList<>();
      try {
        List<BucketProxy> buckets = new ArrayList<>();
        BucketConfiguration conf = BucketConfiguration.builder()
            .addLimit(l -> l.capacity(100_000_000L).refillGreedy(100_000_000L, Duration.ofMinutes(1))).build();
        for (int i = 0; i < 3; i++) {
          com.zaxxer.hikari.HikariDataSource ds = new com.zaxxer.hikari.HikariDataSource();
          ds.setJdbcUrl(db.config().jdbcUrl());
          ds.setUsername(db.config().pgAppUser());
          ds.setPassword(db.config().pgAppPassword());
          ds.setMaximumPoolSize(IN_FLIGHT);
          sources.add(ds);
          PostgreSQLSelectForUpdateBasedProxyManager<String> manager = Bucket4jPostgreSQL.selectForUpdateBasedBuilder(ds)
              .primaryKeyMapper(PrimaryKeyMapper.STRING).table("bucket4j_buckets").idColumn("id").stateColumn("state")
              .build();
          buckets.add(manager.builder().build("tenant-" + UUID.randomUUID(), () -> conf));
        }
        // One tenant's bucket, shared: the three replicas' proxies name the same key.
        String key = "tenant-shared";
        List<BucketProxy> shared = new ArrayList<>();
        for (com.zaxxer.hikari.HikariDataSource ds : sources) {
          shared.add(Bucket4jPostgreSQL.selectForUpdateBasedBuilder(ds).primaryKeyMapper(PrimaryKeyMapper.STRING)
              .table("bucket4j_buckets").idColumn("id").stateColumn("state").build().builder().build(key, () -> conf));
        }
        rows.add(measure("Bucket4j PostgreSQL (select for update, JDBC on a worker)",
            () -> vertx.executeBlocking(() -> shared.get(0).tryConsume(1), false),
            i -> () -> vertx.executeBlocking(() -> shared.get(i).tryConsume(1), false)));
      } finally {
        sources.forEach(com.zaxxer.hikari.HikariDataSource::close);
      }
      // 5. A request body's place: taken before the body is read (the release does not hold the request).
      UUID sender = tenant(db);
      Places places = new Places(pools.get(0), replicas.get(0));
      bodies = sequential(() -> places.take(sender, "request_bodies", 1_000_000)
          .compose(p -> {
            p.release();
            return Future.succeededFuture();
          }));
      for (Replicas r : replicas) {
        r.stop().await();
      }
      for (Pool p : pools) {
        p.close().await();
      }
    } finally {
      vertx.close().await();
    }
    return markdown(rows, bodies);
  }

  private static UUID tenant(BenchDatabase db) throws Exception {
    UUID id = UUID.randomUUID();
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement("INSERT INTO tenants (id, name) VALUES (?, ?)")) {
      s.setObject(1, id);
      s.setString(2, "bench-" + id);
      s.executeUpdate();
    }
    return id;
  }

  private Series measure(String option, Supplier<Future<?>> check,
      java.util.function.IntFunction<Supplier<Future<?>>> onReplica) {
    sequential(check, WARM_UP);
    Percentiles seq = sequential(check, SEQUENTIAL);
    long t0 = System.nanoTime();
    Percentiles conc = concurrent(onReplica);
    double perSecond = CONCURRENT / ((System.nanoTime() - t0) / 1e9);
    System.out.printf(Locale.ROOT, "%s: p50 %.3f ms, p95 %.3f ms; 3 x %d in flight: p50 %.3f ms, %.0f checks/s%n",
        option, seq.p50(), seq.p95(), IN_FLIGHT, conc.p50(), perSecond);
    return new Series(option, seq, conc, perSecond);
  }

  private Percentiles sequential(Supplier<Future<?>> check) {
    sequential(check, WARM_UP / 4);
    return sequential(check, SEQUENTIAL / 4);
  }

  /** {@code n} checks one after another on an event loop, each timed from asking to its answer. */
  private Percentiles sequential(Supplier<Future<?>> check, int n) {
    double[] ms = new double[n];
    Promise<Void> done = Promise.promise();
    vertx.runOnContext(v -> next(check, ms, 0, done));
    done.future().await();
    return Percentiles.of(ms);
  }

  /**
   * Checks {@code i} onwards, one after another: a check answered at once (the in-process bucket, a
   * batch's token) is followed in a loop, one that waits for the database from its callback.
   */
  private static void next(Supplier<Future<?>> check, double[] ms, int from, Promise<Void> done) {
    for (int i = from; i < ms.length; i++) {
      long t0 = System.nanoTime();
      Future<?> f = check.get();
      if (!f.isComplete()) {
        int at = i;
        f.onComplete(ar -> {
          if (ar.failed()) {
            done.tryFail(new IllegalStateException("a check failed: " + ar.cause()));
            return;
          }
          ms[at] = (System.nanoTime() - t0) / 1e6;
          next(check, ms, at + 1, done);
        });
        return;
      }
      if (f.failed()) {
        done.tryFail(new IllegalStateException("a check failed: " + f.cause()));
        return;
      }
      ms[i] = (System.nanoTime() - t0) / 1e6;
    }
    done.tryComplete();
  }

  /** {@value #CONCURRENT} checks over 3 replicas, {@value #IN_FLIGHT} in flight on each. */
  private Percentiles concurrent(java.util.function.IntFunction<Supplier<Future<?>>> onReplica) {
    double[] ms = new double[CONCURRENT];
    java.util.concurrent.atomic.AtomicInteger nextIndex = new java.util.concurrent.atomic.AtomicInteger();
    List<Future<Void>> lanes = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      Supplier<Future<?>> check = onReplica.apply(r);
      for (int lane = 0; lane < IN_FLIGHT; lane++) {
        Promise<Void> laneDone = Promise.promise();
        vertx.runOnContext(v -> lane(check, ms, nextIndex, laneDone));
        lanes.add(laneDone.future());
      }
    }
    Future.all(lanes).await();
    return Percentiles.of(ms);
  }

  private static void lane(Supplier<Future<?>> check, double[] ms, java.util.concurrent.atomic.AtomicInteger nextIndex,
      Promise<Void> done) {
    for (int i = nextIndex.getAndIncrement(); i < ms.length; i = nextIndex.getAndIncrement()) {
      long t0 = System.nanoTime();
      Future<?> f = check.get();
      if (!f.isComplete()) {
        int at = i;
        f.onComplete(ar -> {
          if (ar.failed()) {
            done.tryFail(new IllegalStateException("a check failed: " + ar.cause()));
            return;
          }
          ms[at] = (System.nanoTime() - t0) / 1e6;
          lane(check, ms, nextIndex, done);
        });
        return;
      }
      if (f.failed()) {
        done.tryFail(new IllegalStateException("a check failed: " + f.cause()));
        return;
      }
      ms[i] = (System.nanoTime() - t0) / 1e6;
    }
    done.tryComplete();
  }

  private static String markdown(List<Series> rows, Percentiles bodies) {
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, "Rate quota check per request, %d checks one after another on an event loop"
        + " (after %d to warm up), then %d over 3 replicas with %d in flight each (one tenant's bucket):%n%n",
        SEQUENTIAL, WARM_UP, CONCURRENT, IN_FLIGHT));
    md.append("| option | p50 ms | p95 ms | p99 ms | 3 replicas: p50 ms | p95 ms | checks/s |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Series s : rows) {
      md.append(String.format(Locale.ROOT, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f |%n", s.option(),
          s.sequential().p50(), s.sequential().p95(), s.sequential().p99(), s.concurrent().p50(),
          s.concurrent().p95(), s.perSecond()));
    }
    double added = rows.get(1).sequential().p50() - rows.get(0).sequential().p50();
    md.append(String.format(Locale.ROOT, "%nAdded by the cluster-wide check at the p50 (batched, the default quota):"
        + " %.3f ms (target: at most 2 ms).%n", added));
    md.append(String.format(Locale.ROOT, "A request body's place (one round trip before the body is read): p50 %.3f ms,"
        + " p95 %.3f ms, p99 %.3f ms.%n", bodies.p50(), bodies.p95(), bodies.p99()));
    return md.toString();
  }
}
