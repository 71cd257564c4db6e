package dev.quarry.tenancy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.config.Quota;
import dev.quarry.config.TenancySettings;
import dev.quarry.store.Database;
import dev.quarry.store.Replicas;
import dev.quarry.support.Await;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Several replicas' quota counting on one real PostgreSQL, each replica its own Vert.x, pool and
 * lease, as separate gateway processes would have: places and tokens are the cluster's, not a
 * replica's, and a replica that dies gives its places back when its lease lapses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Quotas across replicas: one count in PostgreSQL")
class ClusterQuotasTest {
  private TestDatabase db;
  private TenancySettings settings;
  private final List<Replica> replicas = new ArrayList<>();

  /** One replica's own Vert.x, pool, lease and quotas. */
  private final class Replica {
    final Vertx vertx = Vertx.vertx();
    final Pool pool = Database.pool(vertx, db.config(), 4);
    final Replicas lease;
    final Quotas quotas;

    Replica(Duration leaseTime) {
      lease = new Replicas(vertx, pool, "cluster-quotas-test", leaseTime);
      lease.start().await();
      quotas = new Quotas(pool, settings, lease);
      replicas.add(this);
    }

    /** As SIGKILL would: nothing is given back, nothing renewed. */
    void die() {
      vertx.close().await();
    }
  }

  @BeforeAll
  void start() {
    db = TestDatabase.create();
    settings = db.config().tenancy()
        .withDefault(Quota.CONCURRENT_ANALYSES, 3)
        .withDefault(Quota.REQUESTS_PER_MINUTE, 120);
  }

  @AfterAll
  void stop() {
    for (Replica r : replicas) {
      r.vertx.close().await();
    }
    db.close();
  }

  private UUID tenant() throws Exception {
    UUID id = UUID.randomUUID();
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement("INSERT INTO tenants (id, name) VALUES (?, ?)")) {
      s.setObject(1, id);
      s.setString(2, "t-" + id);
      s.executeUpdate();
    }
    return id;
  }

  private long rows(String sql) throws Exception {
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(sql); ResultSet rs = s.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  @DisplayName("a tenant's concurrent analyses are counted across replicas: 2 on A and 1 on B fill a quota of 3"
      + " on both, and a place given back on B is free on A")
  void placesAcrossReplicas() throws Exception {
    Replica a = new Replica(Duration.ofSeconds(15));
    Replica b = new Replica(Duration.ofSeconds(15));
    UUID t = tenant();
    Quotas.Permit a1 = a.quotas.acquireAnalysis(t).await();
    a.quotas.acquireAnalysis(t).await();
    Quotas.Permit b1 = b.quotas.acquireAnalysis(t).await();
    assertThatThrownBy(() -> a.quotas.acquireAnalysis(t).await()).isInstanceOf(QuotaExceeded.class)
        .hasMessageContaining("concurrent_analyses");
    assertThatThrownBy(() -> b.quotas.acquireAnalysis(t).await()).isInstanceOf(QuotaExceeded.class);
    assertThat(b.quotas.held(t, Quota.CONCURRENT_ANALYSES).await()).isEqualTo(3);
    b1.release().await();
    a.quotas.acquireAnalysis(t).await();
    a1.release().await();
    a1.release().await();
    assertThat(a.quotas.held(t, Quota.CONCURRENT_ANALYSES).await()).isEqualTo(2);
  }

  @Test
  @DisplayName("many replicas taking the last places at once never take more than the quota")
  void racingForTheLastPlaces() throws Exception {
    List<Replica> three = List.of(new Replica(Duration.ofSeconds(15)), new Replica(Duration.ofSeconds(15)),
        new Replica(Duration.ofSeconds(15)));
    UUID t = tenant();
    List<Future<Quotas.Permit>> asks = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      for (Replica r : three) {
        asks.add(r.quotas.acquireAnalysis(t));
      }
    }
    Future.join(asks).otherwiseEmpty().await();
    assertThat(asks.stream().filter(Future::succeeded).count()).isEqualTo(3);
    assertThat(asks.stream().filter(Future::failed).map(Future::cause)).allMatch(e -> e instanceof QuotaExceeded);
  }

  @Test
  @DisplayName("a replica that dies holding places frees them when its lease lapses; the sweep then removes its rows")
  void deadReplicaFreesItsPlaces() throws Exception {
    Replica survivor = new Replica(Duration.ofSeconds(15));
    Replica doomed = new Replica(Duration.ofSeconds(2));
    UUID t = tenant();
    for (int i = 0; i < 3; i++) {
      doomed.quotas.acquireAnalysis(t).await();
    }
    assertThatThrownBy(() -> survivor.quotas.acquireAnalysis(t).await()).isInstanceOf(QuotaExceeded.class);
    doomed.die();
    Await.until(() -> survivor.quotas.acquireAnalysis(t).otherwiseEmpty().await() != null, Duration.ofSeconds(20),
        "the dead replica's places to be free once its lease lapsed");
    assertThat(rows("SELECT count(*) FROM quota_places WHERE replica_id = '" + doomed.lease.id() + "'")).isEqualTo(3);
    Await.until(() -> survivor.lease.sweepLapsed().await() >= 0
            && rowsQuietly("SELECT count(*) FROM replicas WHERE id = '" + doomed.lease.id() + "'") == 0,
        Duration.ofSeconds(20), "the sweep to remove the lapsed replica");
    // Its places went with it, across row-level security (the foreign key cascades).
    assertThat(rows("SELECT count(*) FROM quota_places WHERE replica_id = '" + doomed.lease.id() + "'")).isZero();
  }

  private long rowsQuietly(String sql) {
    try {
      return rows(sql);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  @DisplayName("requests per minute across three replicas: the tenant gets its quota (within 10%, never over), not three times it")
  void ratesAcrossReplicas() throws Exception {
    List<Replica> three = List.of(new Replica(Duration.ofSeconds(15)), new Replica(Duration.ofSeconds(15)),
        new Replica(Duration.ofSeconds(15)));
    UUID t = tenant();
    // Each sizes its batches by the live replicas it saw at its last renewal (every third of the lease).
    Await.until(() -> three.stream().allMatch(r -> r.lease.live() >= 3), Duration.ofSeconds(15),
        "each replica to count the three");
    long t0 = System.nanoTime();
    AtomicInteger admitted = new AtomicInteger();
    List<Future<Void>> asks = new ArrayList<>();
    for (int round = 0; round < 120; round++) {
      for (Replica r : three) {
        asks.add(r.quotas.admitRequest(t).onSuccess(v -> admitted.incrementAndGet()));
      }
      if (round % 10 == 9) {
        Future.join(asks).otherwiseEmpty().await();
      }
    }
    Future.join(asks).otherwiseEmpty().await();
    double seconds = (System.nanoTime() - t0) / 1e9;
    double allowed = 120 + seconds * 120 / 60;
    assertThat(admitted.get()).as("admitted of 360 asked in %.1f s (the bucket allows %.0f)", seconds, allowed)
        .isBetween((int) Math.floor(0.9 * 120), (int) Math.ceil(allowed));
    assertThat(asks.stream().filter(Future::failed).map(Future::cause)).allMatch(e -> e instanceof QuotaExceeded);
  }

  @Test
  @DisplayName("scheduled work is claimed by one replica per period, whichever asks first")
  void oneReplicaRunsAJob() {
    Replica a = new Replica(Duration.ofSeconds(15));
    Replica b = new Replica(Duration.ofSeconds(15));
    String job = "test-job-" + UUID.randomUUID();
    boolean first = a.lease.claim(job, Duration.ofMinutes(1)).await();
    boolean second = b.lease.claim(job, Duration.ofMinutes(1)).await();
    boolean again = a.lease.claim(job, Duration.ofMinutes(1)).await();
    assertThat(List.of(first, second, again)).containsExactly(true, false, false);
  }
}
