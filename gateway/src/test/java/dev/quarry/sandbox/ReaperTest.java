package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("The reaper")
class ReaperTest {
  @TempDir static Path tmp;
  static SandboxFixture fx;
  static Vertx vertx;

  @BeforeAll
  static void setUp() throws Exception {
    fx = new SandboxFixture(tmp);
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void tearDown() throws Exception {
    await(vertx.close());
    fx.close();
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("removes this gateway's leftovers and stray directories, but not live sandboxes or other gateways'")
  void reapsLeftovers() throws Exception {
    ContainerLauncher launcher = fx.launcher();
    // A launcher that forgot its sandboxes: what a crashed gateway with the same id leaves behind.
    ContainerLauncher crashed = fx.launcher();
    List<Sandbox> leftovers = List.of(
        crashed.launch(fx.tenantA, fx.documents(fx.tenantA)),
        crashed.launch(fx.tenantB, fx.documents(fx.tenantB)),
        crashed.launch(fx.tenantA, fx.documents(fx.tenantA)));
    crashed.kill(leftovers.get(2)); // an exited one counts too
    Path stray = Files.createDirectories(fx.runRoot.resolve(fx.gatewayId).resolve("0123456789ab"));
    Sandbox live = launcher.launch(fx.tenantA, fx.documents(fx.tenantA));
    SandboxSettings s = fx.settings();
    ContainerLauncher otherGateway = new ContainerLauncher(fx.docker, new SandboxSettings(s.dockerHost(),
        s.image(), s.command(), s.user(), fx.gatewayId + "-other", s.runRoot(), s.limits(), s.maxLimits(),
        0, s.reapInterval(), false));
    Sandbox other = otherGateway.launch(fx.tenantB, fx.documents(fx.tenantB));
    try {
      int removed = new Reaper(fx.docker, launcher).reapOnce(false);

      assertThat(removed).isEqualTo(3);
      for (Sandbox l : leftovers) {
        assertThat(fx.exists(l.containerId())).as("leftover %s", l.id()).isFalse();
        assertThat(l.runDir()).doesNotExist();
      }
      assertThat(stray).doesNotExist();
      assertThat(fx.exists(live.containerId())).isTrue();
      assertThat(live.runDir()).isDirectory();
      assertThat(fx.exists(other.containerId())).isTrue();
      assertThat(other.runDir()).isDirectory();
    } finally {
      launcher.remove(live);
      otherGateway.remove(other);
    }
    assertThat(fx.containers()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
  }

  @Test
  @DisplayName("runs at start-up and then periodically on Vert.x")
  void periodic() throws Exception {
    SandboxSettings s = fx.settings();
    ContainerLauncher launcher = new ContainerLauncher(fx.docker, new SandboxSettings(s.dockerHost(), s.image(),
        s.command(), s.user(), s.gatewayId(), s.runRoot(), s.limits(), s.maxLimits(), 0,
        Duration.ofMillis(200), false));
    Sandbox before = fx.launcher().launch(fx.tenantA, fx.documents(fx.tenantA));
    Reaper reaper = new Reaper(fx.docker, launcher);
    Sandbox live = null;
    try {
      assertThat(await(reaper.start(vertx))).as("removed at start-up").isEqualTo(1);
      assertThat(fx.exists(before.containerId())).isFalse();

      // Created behind the launcher's back while the reaper runs: like a create the engine
      // finished after the launcher had given up on it.
      String after = fx.docker.createContainerCmd(SandboxFixture.IMAGE).withCmd(SandboxFixture.IDLE)
          .withLabels(Map.of(ContainerLauncher.LABEL_SANDBOX, "1", ContainerLauncher.LABEL_GATEWAY,
              fx.gatewayId, ContainerLauncher.LABEL_SANDBOX_ID, "feedfacecafe"))
          .exec().getId();
      live = launcher.launch(fx.tenantB, fx.documents(fx.tenantB));
      // The pass that removes it may be one already under way; the next one to start surely has.
      await(reaper.nextPass());
      assertThat(fx.exists(after)).as("leftover created after start-up").isFalse();
      assertThat(fx.exists(live.containerId())).isTrue();
      assertThat(lockedElsewhere(GatewayLease.file(fx.runRoot, fx.gatewayId)))
          .as("this gateway's lease, as another process sees it").isTrue();
    } finally {
      reaper.close();
      if (live != null) {
        launcher.remove(live);
      }
    }
    assertThat(fx.containers()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
    assertThat(GatewayLease.file(fx.runRoot, fx.gatewayId)).as("the lease, given up").doesNotExist();
  }

  /** A launcher for another gateway id on the fixture's engine, image and run root. */
  static ContainerLauncher gateway(String id) {
    SandboxSettings s = fx.settings();
    return new ContainerLauncher(fx.docker, new SandboxSettings(s.dockerHost(), s.image(), s.command(), s.user(),
        id, s.runRoot(), s.limits(), s.maxLimits(), 0, s.reapInterval(), false));
  }

  /** A lease file as a gateway left it: there, last touched a minute ago. */
  static Path staleLease(String gatewayId) throws Exception {
    Path file = GatewayLease.file(fx.runRoot, gatewayId);
    Files.writeString(file, "");
    Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.from(java.time.Instant.now().minusSeconds(60)));
    return file;
  }

  /** Another process (a live gateway) that holds {@code file}'s lock until it is killed. */
  static Process holdLock(Path file) throws Exception {
    Process p = new ProcessBuilder("python3", "-c", "import fcntl, sys\n"
        + "f = open(sys.argv[1], 'r+')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\nsys.stdin.read()",
        file.toString()).redirectErrorStream(true).start();
    String line = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
    assertThat(line).as("the lock holder's word").isEqualTo("locked");
    return p;
  }

  /** Whether another process finds {@code file} locked. */
  static boolean lockedElsewhere(Path file) throws Exception {
    Process p = new ProcessBuilder("python3", "-c", "import fcntl, sys\n"
        + "f = open(sys.argv[1], 'r+')\ntry:\n    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n"
        + "    sys.exit(3)", file.toString()).redirectErrorStream(true).start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("lock probe").isIn(0, 3);
    return p.exitValue() == 3;
  }

  @Test
  @DisplayName("removes every sandbox and run directory of a gateway whose lease is free (it died, even by SIGKILL), never a live one's")
  void reapsGoneGateways() throws Exception {
    String deadId = fx.gatewayId + "-dead";
    String liveId = fx.gatewayId + "-live";
    ContainerLauncher dead = gateway(deadId);
    ContainerLauncher alive = gateway(liveId);
    List<Sandbox> all = new java.util.ArrayList<>();
    Process holder = null;
    try {
      Sandbox running = dead.launch(fx.tenantA, fx.documents(fx.tenantA));
      all.add(running);
      Sandbox exited = dead.launch(fx.tenantB, fx.documents(fx.tenantB));
      all.add(exited);
      dead.kill(exited);
      Sandbox other = alive.launch(fx.tenantA, fx.documents(fx.tenantA));
      all.add(other);
      Path deadLease = staleLease(deadId);
      Path liveLease = staleLease(liveId);
      holder = holdLock(liveLease);

      int removed = new Reaper(fx.docker, fx.launcher()).reapOnce(false);

      assertThat(removed).isEqualTo(2);
      assertThat(fx.exists(running.containerId())).as("the dead gateway's running sandbox").isFalse();
      assertThat(fx.exists(exited.containerId())).as("the dead gateway's exited sandbox").isFalse();
      assertThat(fx.runRoot.resolve(deadId)).as("the dead gateway's run directories").doesNotExist();
      assertThat(deadLease).doesNotExist();
      assertThat(fx.exists(other.containerId())).as("the live gateway's sandbox").isTrue();
      assertThat(other.runDir()).isDirectory();
      assertThat(liveLease).exists();

      // The live gateway is killed with SIGKILL: the kernel frees its lease, the next pass reaps it.
      holder.destroyForcibly().waitFor();
      assertThat(new Reaper(fx.docker, fx.launcher()).reapOnce(false)).isEqualTo(1);
      assertThat(fx.exists(other.containerId())).isFalse();
      assertThat(fx.runRoot.resolve(liveId)).doesNotExist();
      assertThat(liveLease).doesNotExist();
    } finally {
      if (holder != null) {
        holder.destroyForcibly().waitFor();
      }
      for (Sandbox s : all) {
        fx.launcher().remove(s);
      }
    }
  }

  @Test
  @DisplayName("removes scoped views whose sandbox is not alive (a crash) and every view of a gone gateway, never a reserved or live sandbox's")
  void reapsViews() throws Exception {
    java.util.UUID doc = java.util.UUID.randomUUID();
    Path tree = fx.documents(fx.tenantA);
    Files.createDirectories(tree.resolve(doc.toString()));
    Files.writeString(tree.resolve(doc.toString()).resolve("content.txt"), "scoped text");
    ScopedViews views = new ScopedViews(fx.documentsRoot, fx.gatewayId);
    ContainerLauncher launcher = new ContainerLauncher(fx.docker, fx.settings(), views);
    Scope scope = new Scope(java.util.Set.of(doc));
    // A view whose sandbox this gateway no longer knows: what a crash between build and launch leaves.
    Path crashed = views.build(tree, "0123456789ab", scope);
    // One reserved and built, its launch still to come; one of a launched sandbox.
    String reserved = launcher.reserve();
    Path pending = views.build(tree, reserved, scope);
    String launchedId = launcher.reserve();
    views.build(tree, launchedId, scope);
    Sandbox launched = launcher.launch(launchedId, fx.tenantA, fx.settings().limits(), fx.settings().command(),
        runDir -> views.dir(launchedId));
    String deadId = fx.gatewayId + "-deadviews";
    Path deadView = new ScopedViews(fx.documentsRoot, deadId).build(tree, "feedfacecafe", scope);
    Path deadLease = staleLease(deadId);
    try {
      new Reaper(fx.docker, launcher).reapOnce(false);

      assertThat(crashed).as("the view of a sandbox that is not alive").doesNotExist();
      assertThat(pending.resolve(doc.toString()).resolve("content.txt")).as("a reserved sandbox's view").exists();
      assertThat(views.dir(launchedId)).as("a live sandbox's view").isDirectory();
      assertThat(deadView.getParent()).as("the views of a gone gateway").doesNotExist();
      assertThat(deadLease).doesNotExist();
      assertThat(tree.resolve(doc.toString()).resolve("content.txt")).as("the tenant's own file")
          .hasContent("scoped text");
    } finally {
      launcher.release(reserved);
      launcher.remove(launched);
    }
    assertThat(pending).doesNotExist();
    assertThat(views.dir(launchedId)).doesNotExist();
  }

  @Test
  @DisplayName("leaves a lease just made alone: a starting gateway may not have locked it yet")
  void freshLeaseIsAlive() throws Exception {
    String id = fx.gatewayId + "-new";
    ContainerLauncher starting = gateway(id);
    Path lease = GatewayLease.file(fx.runRoot, id);
    Files.writeString(lease, "");
    Sandbox s = starting.launch(fx.tenantA, fx.documents(fx.tenantA));
    try {
      new Reaper(fx.docker, fx.launcher()).reapOnce(false);
      assertThat(fx.exists(s.containerId())).isTrue();
      assertThat(lease).exists();
    } finally {
      starting.remove(s);
      Files.deleteIfExists(lease);
    }
  }

  @Test
  @DisplayName("removes another gateway's exited sandbox past the grace, with its run directory, but not its running ones")
  void reapsLongExited() throws Exception {
    String otherId = fx.gatewayId + "-elsewhere"; // a gateway whose lease is not in this run root
    ContainerLauncher other = gateway(otherId);
    Sandbox exited = other.launch(fx.tenantA, fx.documents(fx.tenantA));
    Sandbox running = other.launch(fx.tenantB, fx.documents(fx.tenantB));
    try {
      other.kill(exited);
      other.awaitExit(exited, Duration.ofSeconds(30));
      new Reaper(fx.docker, fx.launcher(), Duration.ZERO, Reaper.LEASE_GRACE,
          Map.of(ContainerLauncher.LABEL_SANDBOX, "1", ContainerLauncher.LABEL_GATEWAY, otherId)).reapOnce(false);
      assertThat(fx.exists(exited.containerId())).isFalse();
      assertThat(exited.runDir()).doesNotExist();
      assertThat(fx.exists(running.containerId())).isTrue();
      assertThat(running.runDir()).isDirectory();
    } finally {
      other.remove(exited);
      other.remove(running);
    }
  }
}
