package dev.quarry.sandbox;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.config.InvalidSetting;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns every sandbox of the gateway: the launcher, the warm pool, the reaper and every open
 * session. {@link #close()} (gateway shutdown) closes them all.
 *
 * <p>A sandbox is handed out only after its runner connected to its socket and said Ready: the
 * socket is served before the container is created, so the runner never races it.
 */
public final class SandboxService {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxService.class);
  /** From container start to the runner's Ready; far above the usual second, for a loaded host. */
  static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  /** How often a starting sandbox' container is looked at while its runner has not said Ready. */
  static final long START_CHECK_MS = 1_000;
  private static final long SOCKET_LISTEN_SECONDS = 10;

  private final Vertx vertx;
  private final SandboxSettings settings;
  private final TenantTrees trees;
  private final DockerClient docker;
  private final ContainerLauncher launcher;
  private final Reaper reaper;
  private final WarmPool pool;
  /** Pooled sandboxes' endpoints, by sandbox id, until someone takes them. */
  private final Map<String, LiveSandbox> pooled = new ConcurrentHashMap<>();
  private final Set<GrpcSandboxSession> sessions = ConcurrentHashMap.newKeySet();
  private final SandboxCapacity capacity;
  /** The capacity slot of every container that exists, by sandbox id, until it is removed. */
  private final Map<String, SandboxCapacity.Slot> slots = new ConcurrentHashMap<>();
  private final QuarryMetrics metrics;
  private final SandboxHealth health;
  /** Tenants deleted while this gateway ran: they get no sandbox again (ids are never reused). */
  private final Set<UUID> removedTenants = ConcurrentHashMap.newKeySet();
  /** Sessions being opened, and for which tenant. */
  private final Map<Future<SandboxSession>, UUID> openings = new ConcurrentHashMap<>();
  /** A tenant's concurrent_sandboxes quota (the tenancy part's; unbounded when none is given). */
  private final Function<UUID, Future<Integer>> sandboxQuota;
  /** The tenant's places in that quota across the replicas. */
  private final SandboxPlaces places;
  /** Sandboxes each tenant holds now: asked for (queued or starting) or open, until removed. */
  private final Map<UUID, Integer> held = new ConcurrentHashMap<>();
  /** Callbacks each tenant has in flight across its sandboxes. */
  private final Map<UUID, InFlightLimit> tenantCallbacks = new ConcurrentHashMap<>();
  private volatile boolean closed;
  /** The timer of {@link #watchTenants}, or -1. */
  private volatile long tenantWatch = -1;
  /**
   * How often a gateway looks whether the tenants it holds sandboxes for still exist: another
   * replica may have deleted one (README, Security).
   */
  public static final Duration TENANT_CHECK = Duration.ofSeconds(5);

  /**
   * @param trees the tenants' documents on the host (the store's {@code DocumentsFs}): an unscoped
   *              sandbox mounts its tenant's tree read-only at /documents, a scoped one a view built
   *              beside the trees ({@link ScopedViews})
   */
  public SandboxService(Vertx vertx, SandboxSettings settings, TenantTrees trees) {
    this(vertx, settings, trees, new QuarryMetrics());
  }

  public SandboxService(Vertx vertx, SandboxSettings settings, TenantTrees trees, QuarryMetrics metrics) {
    this(vertx, settings, trees, metrics, tenant -> Future.succeededFuture(Integer.MAX_VALUE));
  }

  /**
   * @param sandboxQuota a tenant's {@code concurrent_sandboxes} quota; a tenant also never holds more
   *                     than its share of the gateway ({@link SandboxSettings.Fairness#tenantShare})
   */
  public SandboxService(Vertx vertx, SandboxSettings settings, TenantTrees trees,
      QuarryMetrics metrics, Function<UUID, Future<Integer>> sandboxQuota) {
    this(vertx, settings, trees, metrics, sandboxQuota, SandboxPlaces.UNBOUNDED);
  }

  /**
   * @param places the tenant's places in its {@code concurrent_sandboxes} quota across the replicas;
   *               {@code sandboxQuota} then bounds what it holds on this replica alone, as the share does
   */
  public SandboxService(Vertx vertx, SandboxSettings settings, TenantTrees trees,
      QuarryMetrics metrics, Function<UUID, Future<Integer>> sandboxQuota, SandboxPlaces places) {
    this.vertx = vertx;
    this.sandboxQuota = sandboxQuota;
    this.places = places;
    this.metrics = metrics;
    this.settings = settings;
    this.trees = trees;
    this.docker = ContainerLauncher.connect(settings.dockerHost());
    this.launcher = new ContainerLauncher(docker, settings, new ScopedViews(trees.root(), settings.gatewayId()));
    this.reaper = new Reaper(docker, launcher);
    this.capacity = new SandboxCapacity(vertx, settings.maxActive(), settings.maxWait(), this::evictIdle,
        tenant -> held.getOrDefault(tenant, 0));
    // The pool warms only with room to spare, so warm sandboxes never keep a request waiting.
    this.pool = new WarmPool(settings.poolPerTenant(),
        tenantId -> startLive(tenantId, Scope.ALL, spareSlot()).map(live -> {
          pooled.put(live.sandbox().id(), live);
          return live.sandbox();
        }),
        sandbox -> {
          LiveSandbox live = pooled.remove(sandbox.id());
          return dispose(live == null ? new LiveSandbox(sandbox, new SandboxEndpoint(vertx)) : live);
        });
    // Pooled endpoints are exactly the Ready sandboxes nobody has taken yet, across all tenants.
    metrics.warmPoolSize(pooled::size);
    metrics.sandboxCapacity(capacity::limit, capacity::used, capacity::waiting);
    this.health = new SandboxHealth(vertx, docker, settings, metrics, this::probe);
  }

  /** Whether sandboxes can start here (the image pulled, a probe sandbox started): {@code /readyz}'s check. */
  public SandboxHealth health() {
    return health;
  }

  /**
   * Reaps leftovers of earlier runs, starts the periodic reaper, and sizes the gateway to the engine
   * ({@link #checkEngine}). Fails with {@link InvalidSetting} for a sandbox the engine cannot give.
   */
  public Future<Void> start() {
    return reaper.start(vertx).compose(n -> vertx.<Void>executeBlocking(() -> {
      checkEngine(launcher.engine());
      return null;
    }, false).recover(e -> {
      if (e instanceof InvalidSetting) {
        return Future.failedFuture(e);
      }
      LOG.debug("asking the engine about its CPUs and memory: {}", e.toString());
      return Future.succeededFuture();
    }));
  }

  /**
   * Holds the sandboxes to what the engine has. A sandbox's CPU limit must be one the engine can
   * give (else every start would fail: refused). The gateway keeps no more containers than the
   * engine's CPUs times {@code QUARRY_SANDBOX_CPU_OVERCOMMIT} carry at their CPU limit, so their limits
   * add up to at most that, and each tenant's share of them (its CPU) shrinks with them. Says so
   * when the engine has less memory than the sandboxes may take: then the kernel, not the limit,
   * decides which sandbox dies under load.
   */
  private void checkEngine(ContainerLauncher.Engine engine) {
    SandboxSettings.Cpu cpu = settings.cpu();
    double cpus = cpu.engineCpus() > 0 ? cpu.engineCpus() : engine.cpus();
    long nanoCpus = settings.limits().nanoCpus();
    if (cpus > 0) {
      if (nanoCpus > cpus * 1e9) {
        throw new InvalidSetting("QUARRY_SANDBOX_MILLI_CPUS=" + nanoCpus / 1_000_000 + " is more than the "
            + cpus + " CPUs the Docker engine has" + (cpu.engineCpus() > 0 ? " (QUARRY_SANDBOX_ENGINE_CPUS)" : "")
            + "; no sandbox could start");
      }
      int fit = cpu.sandboxes(cpus, nanoCpus);
      if (fit < 1) {
        throw new InvalidSetting("QUARRY_SANDBOX_CPU_OVERCOMMIT=" + cpu.overcommit() + " leaves the engine's " + cpus
            + " CPUs no room for one sandbox of QUARRY_SANDBOX_MILLI_CPUS=" + nanoCpus / 1_000_000);
      }
      if (fit < settings.maxActive()) {
        capacity.lowerTo(fit);
        LOG.info("at most {} sandboxes at once, not QUARRY_SANDBOX_MAX_ACTIVE={}: {} of {} milli-CPUs fit the engine's"
            + " {} CPUs at QUARRY_SANDBOX_CPU_OVERCOMMIT={} (one tenant holds at most {} of them)", fit,
            settings.maxActive(), fit, nanoCpus / 1_000_000, cpus, cpu.overcommit(),
            Math.min(fit, settings.fairness().tenantShare(fit)));
      }
    }
    long needed = (long) capacity.limit() * settings.limits().memoryBytes();
    if (engine.memoryBytes() > 0 && engine.memoryBytes() < needed) {
      LOG.warn("{} sandboxes of {} MiB need {} MiB, but the Docker engine has {} MiB; lower QUARRY_SANDBOX_MAX_ACTIVE"
          + " or QUARRY_SANDBOX_MEMORY_MIB", capacity.limit(), settings.limits().memoryBytes() >> 20, needed >> 20,
          engine.memoryBytes() >> 20);
    }
  }

  public SandboxSettings settings() {
    return settings;
  }

  /**
   * A live session for the tenant, its runner Ready. With {@link Scope#ALL} a pooled sandbox when
   * one is waiting; a scoped one is always started for the purpose with only its documents. When
   * the gateway has {@link SandboxSettings#maxActive()} containers already, it waits up to
   * {@link SandboxSettings#maxWait()} for one to go, then fails with {@link SandboxCapacityExhausted}.
   */
  public Future<SandboxSession> open(UUID tenantId, Scope scope, Callbacks callbacks) {
    return open(tenantId, scope, callbacks, null);
  }

  /**
   * As {@link #open(UUID, Scope, Callbacks)}, for a caller that may give up while it waits for room:
   * once {@code abandoned} completes, a request still queued for a slot fails at once with
   * {@link java.util.concurrent.CancellationException} and starts nothing. One already starting its
   * container completes; the caller closes what it no longer wants. {@code null}: never abandoned.
   */
  public Future<SandboxSession> open(UUID tenantId, Scope scope, Callbacks callbacks, Future<?> abandoned) {
    if (closed) {
      return Future.failedFuture(new IllegalStateException("the sandbox service is closed"));
    }
    if (removedTenants.contains(tenantId)) {
      return Future.failedFuture(removed(tenantId));
    }
    return sandboxQuota.apply(tenantId).compose(quota -> {
      // The share of what the gateway keeps now: QUARRY_SANDBOX_MAX_ACTIVE, or fewer when the engine's CPUs say so.
      int share = settings.fairness().tenantShare(capacity.limit());
      if (!hold(tenantId, Math.min(quota, share))) {
        return Future.failedFuture(new SandboxQuotaExceeded(quota, share, capacity.limit()));
      }
      Runnable giveBackHere = () -> held.computeIfPresent(tenantId, (id, n) -> n <= 1 ? null : n - 1);
      // Then its place across the replicas: a tenant at its quota on other replicas gets none here.
      return places.take(tenantId).onFailure(e -> giveBackHere.run()).compose(place -> {
        java.util.concurrent.atomic.AtomicBoolean givenBack = new java.util.concurrent.atomic.AtomicBoolean();
        Runnable giveBack = () -> {
          if (givenBack.compareAndSet(false, true)) {
            giveBackHere.run();
            place.run();
          }
        };
        return openHeld(tenantId, scope, callbacks, abandoned, giveBack).onFailure(e -> giveBack.run());
      });
    });
  }

  /** Counts one more sandbox for the tenant unless it holds {@code max} already. */
  private boolean hold(UUID tenantId, int max) {
    boolean[] taken = new boolean[1];
    held.compute(tenantId, (id, n) -> {
      int now = n == null ? 0 : n;
      taken[0] = now < max;
      return taken[0] ? now + 1 : n;
    });
    return taken[0];
  }

  /** Sandboxes the tenant holds on this gateway now (asked for, starting, open or being removed). */
  public int heldBy(UUID tenantId) {
    return held.getOrDefault(tenantId, 0);
  }

  private Future<SandboxSession> openHeld(UUID tenantId, Scope scope, Callbacks callbacks, Future<?> abandoned,
      Runnable giveBack) {
    long asked = System.nanoTime();
    boolean pooledScope = scope.isAll() && settings.poolPerTenant() > 0;
    Sandbox warmOne = pooledScope ? pool.poll(tenantId) : null;
    boolean warm = warmOne != null;
    // The request claims its slot (or its place in the queue) before the pool refills, so that
    // warming never takes the room a request is about to need.
    Future<LiveSandbox> live = warm ? pooledLive(warmOne) : startLive(tenantId, scope, capacity.acquire(tenantId, abandoned));
    if (pooledScope && !removedTenants.contains(tenantId)) {
      pool.refill(tenantId);
    }
    Future<SandboxSession> opened = live.onFailure(e -> {
      if (!(e instanceof java.util.concurrent.CancellationException)) {
        metrics.sandboxStartFailed(startFailure(e)); // an abandoned wait is nobody's failure
        health.sandboxFailed(e);
      }
    }).compose(l -> {
      metrics.sandboxAcquired(warm, Duration.ofNanos(System.nanoTime() - asked));
      GrpcSandboxSession[] holder = new GrpcSandboxSession[1];
      InFlightLimit tenantLimit = tenantCallbacks.computeIfAbsent(tenantId, id -> new InFlightLimit(
          settings.fairness().callbacksPerTenant(), task -> vertx.runOnContext(v -> task.run())));
      GrpcSandboxSession session = new GrpcSandboxSession(vertx, launcher, l, scope, callbacks, () -> {
        sessions.remove(holder[0]);
        metrics.sandboxReleased();
      }, () -> {
        releaseSlot(l.sandbox().id());
        giveBack.run();
      }, metrics, settings.fairness(), tenantLimit);
      holder[0] = session;
      sessions.add(session);
      if (closed) {
        // Shut down while it started: nobody may have it.
        return session.close().transform(ar -> Future.failedFuture(
            new IllegalStateException("the sandbox service is closed")));
      }
      if (removedTenants.contains(tenantId)) {
        // Its tenant was deleted while it started.
        return session.close().transform(ar -> Future.failedFuture(removed(tenantId)));
      }
      return Future.succeededFuture(session);
    });
    openings.put(opened, tenantId);
    opened.onComplete(ar -> openings.remove(opened));
    return opened;
  }

  private static IllegalStateException removed(UUID tenantId) {
    return new IllegalStateException("tenant " + tenantId + " was deleted");
  }

  /**
   * The tenant was deleted: removes every sandbox of it at once, warm, starting or in use (a cell
   * running in one ends with {@link CellError#TENANT_DELETED}), and refuses it any new one. Completes
   * once the containers are gone, with how many there were.
   */
  public Future<Integer> removeTenant(UUID tenantId) {
    removedTenants.add(tenantId);
    List<Future<?>> removals = new ArrayList<>();
    removals.add(pool.forget(tenantId).otherwiseEmpty());
    // Sessions opening for it end in open(), which closes what it started for a removed tenant.
    for (Map.Entry<Future<SandboxSession>, UUID> opening : openings.entrySet()) {
      if (opening.getValue().equals(tenantId)) {
        removals.add(opening.getKey().otherwiseEmpty());
      }
    }
    CellError why = new CellError(CellError.TENANT_DELETED,
        "the tenant was deleted; its sandboxes were removed while the cell ran", "");
    for (GrpcSandboxSession s : List.copyOf(sessions)) {
      if (s.tenantId().equals(tenantId)) {
        removals.add(s.close(why).otherwiseEmpty());
      }
    }
    if (!removals.isEmpty()) {
      LOG.info("tenant {} deleted: removing its {} sandboxes", tenantId, removals.size());
    }
    return Future.join(removals).map(v -> removals.size());
  }

  /**
   * Every {@code every}, asks {@code existing} which of the tenants this gateway holds sandboxes for
   * (warm, starting or in use) still exist, and removes the sandboxes of those that do not, as
   * {@link #removeTenant} does: a tenant deleted through another replica of the same database loses
   * its sandboxes here within one cycle. A failed lookup (the database away) removes nothing.
   */
  public void watchTenants(Function<Set<UUID>, Future<Set<UUID>>> existing, Duration every) {
    tenantWatch = vertx.setPeriodic(every.toMillis(), id -> {
      Set<UUID> here = tenantsHere();
      if (here.isEmpty() || closed) {
        return;
      }
      existing.apply(here).onSuccess(live -> {
        for (UUID tenant : here) {
          if (!live.contains(tenant) && !removedTenants.contains(tenant)) {
            LOG.info("tenant {} no longer exists (deleted through another gateway): removing its sandboxes here",
                tenant);
            removeTenant(tenant);
          }
        }
      }).onFailure(e -> LOG.debug("checking the tenants of this gateway's sandboxes: {}", e.toString()));
    });
  }

  /** The tenants this gateway holds sandboxes for: pooled, asked for, opening or in use. */
  private Set<UUID> tenantsHere() {
    Set<UUID> tenants = new java.util.HashSet<>(pool.tenants());
    tenants.addAll(held.keySet());
    tenants.addAll(openings.values());
    for (GrpcSandboxSession s : sessions) {
      tenants.add(s.tenantId());
    }
    return tenants;
  }

  /** The reason label of quarry_sandbox_start_failures: the runner never answered, or the engine failed. */
  private static String startFailure(Throwable e) {
    if (e instanceof SandboxCapacityExhausted) {
      return "exhausted";
    }
    return e instanceof ContainerException c && c.getCause() instanceof java.util.concurrent.TimeoutException
        ? "timeout" : "launch";
  }

  /** A slot for warming, only if one is free and nobody waits for it. */
  private Future<SandboxCapacity.Slot> spareSlot() {
    SandboxCapacity.Slot slot = capacity.tryAcquire();
    return slot != null ? Future.succeededFuture(slot)
        : Future.failedFuture(new SandboxCapacityExhausted(capacity.limit(), 0, 1));
  }

  /** Someone waits for room: an idle warm sandbox goes, its slot passing to the waiter. */
  private void evictIdle() {
    Sandbox idle = pool.evictIdle();
    if (idle != null) {
      LOG.debug("removing warm sandbox {} to make room for a request", idle.id());
      pool.dispose(idle);
    }
  }

  /** The container is gone (or its removal gave up; the reaper sees to it): its slot is free. */
  private void releaseSlot(String sandboxId) {
    SandboxCapacity.Slot slot = slots.remove(sandboxId);
    if (slot != null) {
      slot.release();
    }
  }

  /** The pool hands out sandboxes; a pooled one whose runner went away is replaced by a fresh one. */
  private Future<LiveSandbox> pooledLive(Sandbox sandbox) {
    LiveSandbox live = pooled.remove(sandbox.id());
    if (live == null || live.endpoint().isEnded()) {
      LiveSandbox gone = live == null ? new LiveSandbox(sandbox, new SandboxEndpoint(vertx)) : live;
      return dispose(gone).transform(ar -> startLive(sandbox.tenantId(), Scope.ALL,
          capacity.acquire(sandbox.tenantId(), null)));
    }
    return Future.succeededFuture(live);
  }

  /**
   * Once it has a slot: serves a socket, starts a container that dials it, waits for Ready; removes
   * all and frees the slot on failure. The slot then stays with the container until it is removed.
   */
  private Future<LiveSandbox> startLive(UUID tenantId, Scope scope, Future<SandboxCapacity.Slot> slot) {
    return slot.compose(s -> {
      if (closed) {
        s.release();
        return Future.failedFuture(new IllegalStateException("the sandbox service is closed"));
      }
      return launchLive(tenantId, scope, s);
    });
  }

  private Future<LiveSandbox> launchLive(UUID tenantId, Scope scope, SandboxCapacity.Slot slot) {
    SandboxEndpoint endpoint = new SandboxEndpoint(vertx);
    long started = System.nanoTime();
    // Reserved first, so that the reaper never takes the view built for it for a leftover.
    String id = launcher.reserve();
    Future<Path> documents = scope.isAll() ? trees.sync().apply(tenantId)
        : trees.syncAnd().apply(tenantId, tree -> launcher.views().build(tree, id, scope))
            .map(tree -> launcher.views().dir(id));
    return documents
        .compose(docs -> vertx.executeBlocking(() -> launcher.launch(id, tenantId, settings.limits(),
            settings.command(), runDir -> {
              endpoint.listen(runDir.resolve(ContainerLauncher.SOCKET_NAME), launcher.user())
                  .toCompletionStage().toCompletableFuture().get(SOCKET_LISTEN_SECONDS, TimeUnit.SECONDS);
              return docs;
            }), false))
        .transform(ar -> {
          if (ar.failed()) {
            // The launcher removed whatever it had created before it threw; a view built before
            // the launch goes here (the reaper would see to it otherwise).
            slot.release();
            return vertx.executeBlocking(() -> {
              launcher.release(id);
              return null;
            }, false).transform(x -> endpoint.close()).transform(x -> Future.failedFuture(ar.cause()));
          }
          slots.put(ar.result().id(), slot);
          LiveSandbox live = new LiveSandbox(ar.result(), endpoint);
          return readyOrExited(live)
              .timeout(READY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
              .transform(ready -> ready.succeeded()
                  ? Future.succeededFuture(coldStarted(live, started))
                  : dispose(live).transform(x -> Future.failedFuture(new ContainerException(
                      ContainerException.Reason.ENGINE_ERROR, "sandbox " + live.sandbox().id()
                      + " did not become ready: " + ready.cause().getMessage(), ready.cause()))));
        });
  }

  /**
   * The runner's Ready, or a failure as soon as the container is found not running: a container
   * killed or crashed before its runner connected gives no other sign, and would be waited for
   * until {@link #READY_TIMEOUT} (the soak's docker kill of a starting sandbox held an analysis 60 s).
   */
  private Future<Void> readyOrExited(LiveSandbox live) {
    Promise<Void> outcome = Promise.promise();
    live.endpoint().ready().onComplete(ready -> {
      if (ready.succeeded()) {
        outcome.tryComplete();
      } else {
        outcome.tryFail(ready.cause());
      }
    });
    long timer = vertx.setPeriodic(START_CHECK_MS, id -> vertx.executeBlocking(() -> launcher.state(live.sandbox()), false)
        .onSuccess(state -> {
          if (!state.running()) {
            outcome.tryFail(new IllegalStateException("its container stopped (exit status " + state.exitCode()
                + ") before the runner was ready"));
          }
        }));
    return outcome.future().onComplete(done -> vertx.cancelTimer(timer));
  }

  private LiveSandbox coldStarted(LiveSandbox live, long startedNanos) {
    metrics.sandboxColdStart(Duration.ofNanos(System.nanoTime() - startedNanos));
    return live;
  }

  private Future<Void> dispose(LiveSandbox live) {
    return live.endpoint().close().otherwiseEmpty()
        .compose(v -> vertx.<Void>executeBlocking(() -> {
          launcher.remove(live.sandbox());
          return null;
        }, false))
        .onComplete(ar -> releaseSlot(live.sandbox().id()));
  }

  /** The tenant a probe sandbox is labelled with: no tenant's. */
  static final UUID PROBE_TENANT = new UUID(0, 0);

  /**
   * Starts a sandbox as a request's starts (the runner must say Ready on its socket), with an empty
   * /documents of its own, then removes it: the proof {@link SandboxHealth} asks for. It takes a
   * free slot only, never one a request waits for, and completes with how long the start took.
   */
  Future<Duration> probe() {
    if (closed) {
      return Future.failedFuture(new IllegalStateException("the sandbox service is closed"));
    }
    SandboxCapacity.Slot slot = capacity.tryAcquire();
    if (slot == null) {
      return Future.failedFuture(new SandboxCapacityExhausted(capacity.limit(), 0, 1));
    }
    SandboxEndpoint endpoint = new SandboxEndpoint(vertx);
    long started = System.nanoTime();
    return vertx.executeBlocking(() -> launcher.launch(PROBE_TENANT, settings.limits(), settings.command(), runDir -> {
      endpoint.listen(runDir.resolve(ContainerLauncher.SOCKET_NAME), launcher.user())
          .toCompletionStage().toCompletableFuture().get(SOCKET_LISTEN_SECONDS, TimeUnit.SECONDS);
      // Inside the run directory, so that it goes with the sandbox on every path.
      return java.nio.file.Files.createDirectory(runDir.resolve("probe-documents"),
          java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
              java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x")));
    }), false).transform(ar -> {
      if (ar.failed()) {
        slot.release();
        return endpoint.close().transform(x -> Future.failedFuture(ar.cause()));
      }
      slots.put(ar.result().id(), slot);
      LiveSandbox live = new LiveSandbox(ar.result(), endpoint);
      return readyOrExited(live).timeout(READY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .transform(ready -> dispose(live).transform(x -> ready.succeeded()
              ? Future.succeededFuture(Duration.ofNanos(System.nanoTime() - started))
              : Future.failedFuture(new ContainerException(ContainerException.Reason.ENGINE_ERROR,
                  "its runner did not become ready: " + ready.cause().getMessage(), ready.cause()))));
    });
  }

  /** Closes every session and pooled sandbox and stops the reaper. Idempotent. */
  public Future<Void> close() {
    closed = true;
    health.close();
    if (tenantWatch >= 0) {
      vertx.cancelTimer(tenantWatch);
    }
    reaper.stop();
    capacity.failWaiters(new IllegalStateException("the sandbox service is closed"));
    List<Future<?>> all = new ArrayList<>();
    for (GrpcSandboxSession s : List.copyOf(sessions)) {
      all.add(s.close().otherwiseEmpty());
    }
    all.add(pool.close().otherwiseEmpty());
    Promise<Void> done = Promise.promise();
    Future.join(all).onComplete(ar -> {
      // Every sandbox is gone: the lease that tells other gateways this one lives goes too.
      reaper.close();
      try {
        docker.close();
      } catch (Exception e) {
        LOG.debug("closing the Docker client: {}", e.toString());
      }
      done.complete();
    });
    return done.future();
  }

  /** The limit on this gateway's containers and how much of it is taken. */
  public SandboxCapacity capacity() {
    return capacity;
  }

  /** Sessions open now. */
  public int active() {
    return sessions.size();
  }

  /** Fills the tenant's warm pool (start-up, tests); completes once it is full. */
  public Future<Void> warm(UUID tenantId) {
    return pool.warm(tenantId);
  }

  /** The tenants' cgroups of this gateway's sandboxes. */
  TenantCgroups cgroups() {
    return launcher.cgroups();
  }

  /** Where this gateway's scoped sandboxes have their views. */
  ScopedViews scopedViews() {
    return launcher.views();
  }

  /** Sandboxes of this gateway that exist now (pooled, in use or being removed). */
  public Set<String> liveSandboxIds() {
    return launcher.liveIds();
  }

  /** The tenant's callbacks being served now, across its sandboxes (the places they hold). */
  public int callbacksInFlight(UUID tenantId) {
    InFlightLimit limit = tenantCallbacks.get(tenantId);
    return limit == null ? 0 : limit.running();
  }
}
