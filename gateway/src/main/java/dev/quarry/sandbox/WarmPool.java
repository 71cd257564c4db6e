package dev.quarry.sandbox;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Containers started ahead of need, per tenant, so that getting a sandbox does not wait for a
 * container start. A pooled sandbox is handed out once and never comes back: {@link #take} removes
 * it from the pool and a replacement starts in the background. What the caller takes, the caller
 * disposes of ({@link #dispose}); {@link #close} removes whatever is still pooled or starting.
 *
 * <p>What "ready" means is the starter's business: the launcher's alone means running, the
 * {@link SandboxService}'s means the runner connected and said Ready.
 */
public final class WarmPool {
  private static final Logger LOG = LoggerFactory.getLogger(WarmPool.class);
  private final int perTenant;
  private final Function<UUID, Future<Sandbox>> starter;
  private final Function<Sandbox, Future<Void>> disposer;
  private final Map<UUID, TenantPool> pools = new ConcurrentHashMap<>();
  /** Tenants deleted: their pools never fill again. */
  private final java.util.Set<UUID> retiredTenants = ConcurrentHashMap.newKeySet();
  private final Set<Future<?>> starting = new HashSet<>();
  private boolean closed;

  /**
   * @param documentsDir where each tenant's documents are on the host (for example
   *                     {@code DocumentsFs::tenantDir})
   */
  public WarmPool(Vertx vertx, ContainerLauncher launcher, Function<UUID, Path> documentsDir) {
    this(launcher.settings().poolPerTenant(),
        tenantId -> vertx.executeBlocking(() -> launcher.launch(tenantId, documentsDir.apply(tenantId)), false),
        sandbox -> vertx.executeBlocking(() -> {
          launcher.remove(sandbox);
          return null;
        }, false));
  }

  /**
   * @param starter  starts a sandbox for the tenant; it counts as ready when the future completes
   * @param disposer removes a sandbox, on every path
   */
  public WarmPool(int perTenant, Function<UUID, Future<Sandbox>> starter,
      Function<Sandbox, Future<Void>> disposer) {
    this.perTenant = perTenant;
    this.starter = starter;
    this.disposer = disposer;
  }

  /** Fills the tenant's pool; the future completes once it is full, or fails with a launch error. */
  public Future<Void> warm(UUID tenantId) {
    TenantPool pool = pool(tenantId);
    Future<Void> full = pool.whenFull(perTenant);
    refill(pool);
    return full;
  }

  /**
   * A running sandbox for the tenant: a pooled one at once when there is one, else a cold launch.
   * Either way the pool starts a replacement.
   */
  public Future<Sandbox> take(UUID tenantId) {
    TenantPool pool = pool(tenantId);
    Sandbox warm = pool.poll();
    refill(pool);
    if (warm != null) {
      return Future.succeededFuture(warm);
    }
    synchronized (this) {
      if (closed) {
        return Future.failedFuture(new IllegalStateException("sandbox pool is closed"));
      }
    }
    return starter.apply(tenantId);
  }

  /**
   * A pooled sandbox of the tenant if one is ready, else null; unlike {@link #take} it neither
   * starts one nor refills, so that the caller can claim what it needs first ({@link #refill}).
   */
  public Sandbox poll(UUID tenantId) {
    return pool(tenantId).poll();
  }

  /** Starts what the tenant's pool lacks, in the background. */
  public void refill(UUID tenantId) {
    refill(pool(tenantId));
  }

  /**
   * Takes an idle pooled sandbox of any tenant out of the pool, for the caller to dispose of: a
   * request waiting for room matters more than a warm start someone may want later. Null when
   * none is idle.
   */
  public Sandbox evictIdle() {
    for (TenantPool pool : pools.values()) {
      Sandbox s = pool.poll();
      if (s != null) {
        return s;
      }
    }
    return null;
  }

  /** Removes a sandbox taken from this pool; it is never handed out again. */
  public Future<Void> dispose(Sandbox sandbox) {
    return disposer.apply(sandbox);
  }

  /** Tenants with a pool here (warm sandboxes, or some starting). */
  public Set<UUID> tenants() {
    return Set.copyOf(pools.keySet());
  }

  /**
   * Drops the tenant's pool (the tenant was deleted) and disposes of its sandboxes: ready ones at
   * once, one still starting as soon as it is ready (it is never pooled). Completes when all are
   * gone, with how many there were; the pool never fills for the tenant again.
   */
  public Future<Integer> forget(UUID tenantId) {
    retiredTenants.add(tenantId);
    TenantPool pool = pools.remove(tenantId);
    if (pool == null) {
      return Future.succeededFuture(0);
    }
    List<Future<?>> removals = new ArrayList<>();
    List<Sandbox> idle = pool.retire();
    for (Sandbox s : idle) {
      removals.add(dispose(s).otherwiseEmpty());
    }
    // A launch under way for it ends in offer(), which disposes of what it started.
    for (Future<Void> launch : List.copyOf(pool.launches)) {
      removals.add(launch.otherwiseEmpty());
    }
    return Future.join(removals).map(v -> removals.size());
  }

  /** How many started sandboxes wait in the tenant's pool now. */
  public int ready(UUID tenantId) {
    TenantPool pool = pools.get(tenantId);
    return pool == null ? 0 : pool.size();
  }

  /** Stops refilling and removes every pooled or still-starting sandbox. */
  public Future<Void> close() {
    List<Future<?>> waits = new ArrayList<>();
    synchronized (this) {
      closed = true;
      for (Future<?> f : starting) {
        waits.add(f.otherwiseEmpty());
      }
    }
    for (TenantPool pool : pools.values()) {
      for (Sandbox s : pool.drain()) {
        waits.add(dispose(s));
      }
    }
    return Future.join(waits).mapEmpty();
  }

  private TenantPool pool(UUID tenantId) {
    if (retiredTenants.contains(tenantId)) {
      TenantPool none = new TenantPool(tenantId);
      none.retire();
      return none;
    }
    return pools.computeIfAbsent(tenantId, TenantPool::new);
  }

  private void refill(TenantPool pool) {
    synchronized (this) {
      if (closed) {
        return;
      }
      for (int i = pool.reserve(perTenant); i > 0; i--) {
        Future<Void> f = starter.apply(pool.tenantId)
            .compose(s -> offer(pool, s), e -> {
              if (e instanceof SandboxCapacityExhausted) {
                // Warming only uses spare room; with none, the pool stays short until the next take.
                LOG.debug("no room to warm a sandbox for tenant {}", pool.tenantId);
              } else {
                LOG.warn("warm sandbox for tenant {} failed to start: {}", pool.tenantId, e.getMessage());
              }
              pool.failed(e);
              return Future.failedFuture(e);
            });
        starting.add(f);
        pool.launches.add(f);
        f.onComplete(ar -> {
          synchronized (this) {
            starting.remove(f);
          }
          pool.launches.remove(f);
        });
      }
    }
  }

  private Future<Void> offer(TenantPool pool, Sandbox s) {
    synchronized (this) {
      if (!closed) {
        if (pool.add(s)) {
          return Future.succeededFuture();
        }
        // Its tenant was deleted while it started: nobody may have it.
        return dispose(s);
      }
    }
    // Started after close: nobody may have it.
    pool.release();
    return dispose(s);
  }

  /** One tenant's ready sandboxes and the launches under way for it; guarded by its own lock. */
  private static final class TenantPool {
    final UUID tenantId;
    private final Deque<Sandbox> ready = new ArrayDeque<>();
    private final List<Promise<Void>> fullWaiters = new ArrayList<>();
    private int launching;
    private int target;
    private boolean retired;
    /** Its launches under way (for a deleted tenant to wait for). */
    final java.util.Set<Future<Void>> launches = ConcurrentHashMap.newKeySet();

    TenantPool(UUID tenantId) {
      this.tenantId = tenantId;
    }

    /** Books the launches needed to reach {@code size}; returns how many to start. */
    synchronized int reserve(int size) {
      if (retired) {
        return 0;
      }
      target = size;
      int needed = Math.max(0, size - ready.size() - launching);
      launching += needed;
      return needed;
    }

    /** False when the pool was retired meanwhile: then the sandbox is not kept. */
    synchronized boolean add(Sandbox s) {
      launching--;
      if (retired) {
        return false;
      }
      ready.addLast(s);
      if (ready.size() >= target) {
        fullWaiters.forEach(Promise::tryComplete);
        fullWaiters.clear();
      }
      return true;
    }

    synchronized List<Sandbox> retire() {
      retired = true;
      return drain();
    }

    synchronized void release() {
      launching--;
    }

    synchronized void failed(Throwable e) {
      launching--;
      fullWaiters.forEach(p -> p.tryFail(e));
      fullWaiters.clear();
    }

    synchronized Future<Void> whenFull(int size) {
      Promise<Void> p = Promise.promise();
      if (ready.size() >= size) {
        p.complete();
      } else {
        fullWaiters.add(p);
      }
      return p.future();
    }

    synchronized Sandbox poll() {
      return ready.pollFirst();
    }

    synchronized int size() {
      return ready.size();
    }

    synchronized List<Sandbox> drain() {
      List<Sandbox> all = new ArrayList<>(ready);
      ready.clear();
      fullWaiters.forEach(p -> p.tryFail(new IllegalStateException("sandbox pool is closed")));
      fullWaiters.clear();
      return all;
    }
  }
}
