package dev.quarry.tenancy;

import dev.quarry.config.Quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.config.TenancySettings;
import dev.quarry.store.Database;
import dev.quarry.store.Replicas;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Quotas: concurrent analyses and model tokens per day, for the agent to call")
class QuotasTest {
  private TestDatabase db;
  private Vertx vertx;
  private Pool pool;
  private Quotas quotas;
  private Replicas replicas;

  @BeforeAll
  void start() {
    db = TestDatabase.create();
    vertx = Vertx.vertx();
    pool = Database.pool(vertx, db.config());
    TenancySettings settings = db.config().tenancy()
        .withDefault(Quota.CONCURRENT_ANALYSES, 2)
        .withDefault(Quota.MODEL_TOKENS_PER_DAY, 1000);
    replicas = new Replicas(vertx, pool, "quotas-test", java.time.Duration.ofSeconds(15));
    replicas.start().await();
    quotas = new Quotas(pool, settings, replicas);
  }

  @AfterAll
  void stop() {
    replicas.stop().await();
    pool.close().await();
    vertx.close().await();
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

  @Test
  @DisplayName("a tenant runs at most its concurrent analyses; closing a permit (once or twice) frees exactly one place")
  void concurrentAnalyses() throws Exception {
    UUID t = tenant();
    UUID other = tenant();
    Quotas.Permit first = quotas.acquireAnalysis(t).await();
    Quotas.Permit second = quotas.acquireAnalysis(t).await();
    assertThatThrownBy(() -> quotas.acquireAnalysis(t).await())
        .isInstanceOf(QuotaExceeded.class).hasMessageContaining("concurrent_analyses");
    // Another tenant is not affected.
    quotas.acquireAnalysis(other).await().close();
    first.release().await();
    first.release().await();
    assertThat(quotas.held(t, Quota.CONCURRENT_ANALYSES).await()).isEqualTo(1);
    Quotas.Permit third = quotas.acquireAnalysis(t).await();
    assertThatThrownBy(() -> quotas.acquireAnalysis(t).await()).isInstanceOf(QuotaExceeded.class);
    second.release().await();
    third.release().await();
    assertThat(quotas.held(t, Quota.CONCURRENT_ANALYSES).await()).isZero();
  }

  @Test
  @DisplayName("model tokens are counted per tenant per day; at the limit the check fails naming the quota, with a retry after midnight UTC")
  void modelTokens() throws Exception {
    UUID t = tenant();
    UUID other = tenant();
    assertThat(quotas.checkModelTokens(t).await()).isEqualTo(1000);
    quotas.recordModelTokens(t, 600).await();
    assertThat(quotas.checkModelTokens(t).await()).isEqualTo(400);
    quotas.recordModelTokens(t, 400).await();
    assertThatThrownBy(() -> quotas.checkModelTokens(t).await())
        .isInstanceOfSatisfying(QuotaExceeded.class, e -> {
          assertThat(e.quota()).isEqualTo(Quota.MODEL_TOKENS_PER_DAY);
          assertThat(e.retryAfterSeconds()).isBetween(1L, 86_400L);
        })
        .hasMessageContaining("model_tokens_per_day");
    assertThat(quotas.checkModelTokens(other).await()).isEqualTo(1000);
    assertThatThrownBy(() -> quotas.recordModelTokens(t, -1).await()).isInstanceOf(IllegalArgumentException.class);
  }

  /** A clock the test moves. */
  static final class MovingClock extends java.time.Clock {
    private long millis = 1_700_000_000_000L;

    void advance(long ms) {
      millis += ms;
    }

    @Override
    public long millis() {
      return millis;
    }

    @Override
    public java.time.Instant instant() {
      return java.time.Instant.ofEpochMilli(millis);
    }

    @Override
    public java.time.ZoneId getZone() {
      return java.time.ZoneOffset.UTC;
    }

    @Override
    public java.time.Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }

  @Test
  @DisplayName("callbacks per minute: ten seconds' worth at once, then turns at the rate in order; a turn past the"
      + " wait allowed is refused naming the quota and takes nothing; other tenants and an admin's own rate")
  void callbackTurns() throws Exception {
    MovingClock clock = new MovingClock();
    Quotas q = new Quotas(pool, db.config().tenancy().withDefault(Quota.CALLBACKS_PER_MINUTE, 60), replicas, clock);
    UUID t = tenant();
    UUID other = tenant();
    for (int i = 0; i < 10; i++) {
      assertThat(q.reserveCallback(t, 0).await()).as("call %d of the burst", i).isZero();
    }
    assertThat(q.reserveCallback(t, 5000).await()).isEqualTo(1000);
    assertThat(q.reserveCallback(t, 5000).await()).isEqualTo(2000);
    assertThatThrownBy(() -> q.reserveCallback(t, 2500).await())
        .isInstanceOfSatisfying(QuotaExceeded.class, e -> assertThat(e.quota()).isEqualTo(Quota.CALLBACKS_PER_MINUTE))
        .hasMessageContaining("quota callbacks_per_minute exceeded (limit 60)")
        .hasMessageContaining("after its cell's wall time");
    assertThat(q.reserveCallback(t, 5000).await()).as("the next turn: the refusal took none").isEqualTo(3000);
    assertThat(q.reserveCallback(other, 0).await()).as("another tenant's first call").isZero();
    clock.advance(3000);
    assertThat(q.reserveCallback(t, 5000).await()).as("three seconds later, the debt paid").isEqualTo(1000);

    q.setOverrides(t, java.util.Map.of(Quota.CALLBACKS_PER_MINUTE, 600L)).await();
    for (int i = 0; i < 100; i++) {
      assertThat(q.reserveCallback(t, 0).await()).as("call %d of the new burst", i).isZero();
    }
    assertThat(q.reserveCallback(t, 5000).await()).isEqualTo(100);
    assertThatThrownBy(() -> q.setOverrides(t, java.util.Map.of(Quota.CALLBACKS_PER_MINUTE, 100_001L)).await())
        .hasMessageContaining("callbacks_per_minute").hasMessageContaining("QUARRY_QUOTA_CALLBACKS_PER_MINUTE_MAX");
  }
}
