package dev.quarry.gateway;

import dev.quarry.agent.AbandonedAnalyses;
import dev.quarry.agent.AnalysisService;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentsFs;
import dev.quarry.store.Notifications;
import dev.quarry.store.Replicas;
import dev.quarry.tenancy.Quotas;
import dev.quarry.tenancy.TenantEvents;
import dev.quarry.tenancy.TenantStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This gateway as one replica of many on one database (decision record 0071): its lease among the
 * replicas ({@link Replicas}), the notifications it hears from the others ({@link Notifications}) and
 * what it does on them, the polling that catches what a lost notification would have said, and the
 * scheduled work that one replica does for all.
 *
 * <p>On a tenant's deletion beginning, its analyses here end and its sandboxes go; once its rows are
 * gone, what this replica caches of it goes too (keys, limits, search copies, /documents files). On
 * a revocation its cached keys go; on a change of its quotas its cached limits. On a write of a
 * running analysis' events, the streams following it here read them (decision record 0080). After
 * the listening connection comes back (notifications may have been missed) every cached key and
 * limit goes and every follower reads again, and every {@link #TENANT_CHECK} the tenants of the
 * analyses running here are looked up anyway.
 */
final class Cluster {
  private static final Logger log = LoggerFactory.getLogger(Cluster.class);
  /** How often the tenants of the analyses running here are looked up (a missed deletion). */
  static final Duration TENANT_CHECK = SandboxService.TENANT_CHECK;
  /** How often, across all replicas together, abandoned analyses are swept. */
  static final Duration SWEEP_EVERY = Duration.ofMinutes(1);

  private final Vertx vertx;
  private final Replicas replicas;
  private final Notifications notifications;
  private long tenantWatch = -1;
  private long takeOverWatch = -1;
  /** How often each replica looks for analyses that no live replica holds. */
  static final Duration TAKE_OVER_EVERY = Duration.ofSeconds(2);

  Cluster(Vertx vertx, Replicas replicas, Notifications notifications) {
    this.vertx = vertx;
    this.replicas = replicas;
    this.notifications = notifications;
  }

  Replicas replicas() {
    return replicas;
  }

  /** Registers this replica and opens the listening connection; both before the gateway serves. */
  Future<Void> start() {
    return replicas.start().compose(v -> notifications.start());
  }

  /** What this replica does on the others' notifications, and the polling behind them. */
  void listen(TenantStore tenants, Quotas quotas, AnalysisService analyses, SandboxService sandboxes,
      SearchService search, DocumentsFs documentsFs) {
    notifications.listen(TenantEvents.CHANNEL, payload -> TenantEvents.parse(payload).ifPresent(event -> {
      UUID tenant = event.tenant();
      switch (event.kind()) {
        case DELETING -> {
          tenants.forgetKeysOf(tenant);
          endWork(tenant, analyses, sandboxes);
        }
        case DELETED -> {
          tenants.forgetKeysOf(tenant);
          endWork(tenant, analyses, sandboxes); // a replica that missed DELETING
          quotas.forget(tenant);
          search.forgetTenant(tenant);
          documentsFs.tenantDeleted(tenant)
              .onFailure(e -> log.warn("tenant {}: its /documents files could not all be removed: {}", tenant,
                  e.toString()));
        }
        case KEYS_REVOKED -> tenants.forgetKeysOf(tenant);
        case QUOTAS_CHANGED -> quotas.forgetLimits(tenant);
      }
    }), () -> {
      // Subscribed, at first or again: what a missed notification would have dropped goes now.
      tenants.forgetAllKeys();
      quotas.forgetAllLimits();
    });
    notifications.listen(AnalysisService.CHANNEL, analyses::signalled, () -> { });
    // Followers here of analyses running elsewhere read their stored events when told of a write;
    // after a reconnection all read, as some writes may have gone unheard.
    notifications.listen(dev.quarry.agent.EventWakeups.CHANNEL, analyses.wakeups()::notified,
        analyses.wakeups()::wakeAll);
    // Analyses whose replica died (its lease lapsed) or handed them off: taken over by whichever
    // replica looks first (a hand-off is also announced, and taken at once).
    takeOverWatch = vertx.setPeriodic(TAKE_OVER_EVERY.toMillis(), id -> analyses.takeOver()
        .onFailure(e -> log.debug("looking for analyses to take over: {}", e.toString())));
    tenantWatch = vertx.setPeriodic(TENANT_CHECK.toMillis(), id -> {
      Set<UUID> here = analyses.tenantsRunning();
      if (here.isEmpty()) {
        return;
      }
      tenants.existing(here).onSuccess(live -> here.stream().filter(t -> !live.contains(t)).forEach(t -> {
        log.info("tenant {} no longer exists (deleted through another gateway): ending its analyses here", t);
        analyses.endTenant(t);
      })).onFailure(e -> log.debug("checking the tenants of this gateway's analyses: {}", e.toString()));
    });
  }

  private static void endWork(UUID tenant, AnalysisService analyses, SandboxService sandboxes) {
    int ended = analyses.endTenant(tenant);
    if (ended > 0) {
      log.info("tenant {} is being deleted (announced by the replica deleting it): ended its {} analyses here", tenant, ended);
    }
    sandboxes.removeTenant(tenant);
  }

  /**
   * The once-a-minute work shared by all replicas, on this replica's turn: the sweep of analyses a
   * dead gateway left running, and of replicas whose lease lapsed (their places go with them).
   */
  void sweep(AbandonedAnalyses abandoned) {
    replicas.claim("abandoned_analyses", SWEEP_EVERY).compose(mine -> mine ? abandoned.sweep()
            : Future.succeededFuture(java.util.List.<UUID>of()))
        .onSuccess(ended -> {
          if (!ended.isEmpty()) {
            log.warn("ended {} analyses left running by a gateway that stopped without ending them: {}",
                ended.size(), ended);
          }
        })
        .onFailure(e -> log.warn("sweeping abandoned analyses failed: {}", e.getMessage()));
    replicas.claim("lapsed_replicas", replicas.lease()).compose(mine -> mine ? replicas.sweepLapsed()
            : Future.succeededFuture(0))
        .onSuccess(n -> {
          if (n > 0) {
            log.warn("removed {} replicas whose lease lapsed (stopped without saying so); their places are free", n);
          }
        })
        .onFailure(e -> log.warn("sweeping lapsed replicas failed: {}", e.getMessage()));
  }

  /** Stops listening and leaves the replicas (this one's places go with its row). */
  Future<Void> stop() {
    if (tenantWatch >= 0) {
      vertx.cancelTimer(tenantWatch);
    }
    if (takeOverWatch >= 0) {
      vertx.cancelTimer(takeOverWatch);
    }
    return Future.join(notifications.close().otherwiseEmpty(), replicas.stop()).mapEmpty();
  }
}
