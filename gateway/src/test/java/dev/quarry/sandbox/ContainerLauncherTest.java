package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.sandbox.ContainerException.Reason;
import dev.quarry.sandbox.ContainerLauncher.ExecResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("A launched sandbox container")
class ContainerLauncherTest {
  private static final Duration EXEC_WAIT = Duration.ofSeconds(30);

  @TempDir static Path tmp;
  static SandboxFixture fx;
  static ContainerLauncher launcher;

  @BeforeAll
  static void setUp() throws Exception {
    fx = new SandboxFixture(tmp);
    launcher = fx.launcher();
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      assertThat(fx.containers()).as("containers left behind by the tests").isEmpty();
    } finally {
      fx.close();
    }
  }

  static ExecResult sh(Sandbox s, String script) {
    return launcher.exec(s, List.of("sh", "-c", script), EXEC_WAIT);
  }

  static ExecResult python(Sandbox s, String code) {
    return launcher.exec(s, List.of("python3", "-c", code), EXEC_WAIT);
  }

  @Nested
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  @DisplayName("is hardened")
  class Hardened {
    Sandbox s;

    @BeforeAll
    void launch() {
      s = launcher.launch(fx.tenantA, fx.documents(fx.tenantA));
    }

    @AfterAll
    void remove() {
      launcher.remove(s);
      assertThat(fx.exists(s.containerId())).isFalse();
    }

    @Test
    @DisplayName("has no network but loopback, and cannot connect out")
    void noNetwork() {
      ExecResult dev = sh(s, "cat /proc/net/dev");
      assertThat(dev.exitCode()).isZero();
      List<String> interfaces = dev.stdout().lines().skip(2)
          .map(l -> l.split(":")[0].trim()).toList();
      assertThat(interfaces).containsExactly("lo");

      ExecResult connect = python(s, """
          import socket
          try:
              socket.create_connection(("1.1.1.1", 53), timeout=2)
              print("connected")
          except OSError as e:
              print("refused", type(e).__name__)
          """);
      assertThat(connect.stdout()).startsWith("refused");
    }

    @Test
    @DisplayName("has a read-only root filesystem")
    void readOnlyRoot() {
      ExecResult r = sh(s, "echo x > /etc/quarry-test");
      assertThat(r.exitCode()).isNotZero();
      assertThat(r.stderr()).contains("Read-only file system");
      assertThat(sh(s, "echo x > /usr/quarry-test").exitCode()).isNotZero();
    }

    @Test
    @DisplayName("runs as nobody, not root")
    void nonRoot() {
      assertThat(sh(s, "id -u").stdout().trim()).isEqualTo("65534");
      assertThat(sh(s, "id -g").stdout().trim()).isEqualTo("65534");
      assertThat(sh(s, "cat /proc/1/status").stdout()).contains("Uid:\t65534\t65534\t65534\t65534");
    }

    @Test
    @DisplayName("holds no capabilities and cannot gain privileges")
    void noCapabilities() {
      Map<String, String> status = sh(s, "cat /proc/self/status").stdout().lines()
          .filter(l -> l.contains(":"))
          .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')), l -> l.substring(l.indexOf(':') + 1).trim()));
      for (String cap : List.of("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")) {
        assertThat(status.get(cap)).as(cap).isEqualTo("0000000000000000");
      }
      assertThat(status.get("NoNewPrivs")).isEqualTo("1");
    }

    @Test
    @DisplayName("sees only its tenant's documents, read-only")
    void documents() {
      assertThat(sh(s, "ls /documents").stdout().lines().toList()).containsExactly("doc-a");
      assertThat(sh(s, "cat /documents/doc-a/content.txt").stdout()).isEqualTo("tenant A's report");
      ExecResult w = sh(s, "echo x > /documents/doc-a/new.txt");
      assertThat(w.exitCode()).isNotZero();
      assertThat(w.stderr()).contains("Read-only file system");
      assertThat(sh(s, "grep -rs CANARY-OTHER-TENANT /documents /tmp /run/quarry; echo done").stdout())
          .isEqualTo("done\n");
    }

    @Test
    @DisplayName("has a small /tmp it may write but not execute from")
    void tmpfs() {
      assertThat(sh(s, "echo hi > /tmp/x && cat /tmp/x").stdout()).isEqualTo("hi\n");
      ExecResult run = sh(s, "printf '#!/bin/sh\\necho ran\\n' > /tmp/run.sh && chmod +x /tmp/run.sh && /tmp/run.sh");
      assertThat(run.stdout()).doesNotContain("ran");
      assertThat(run.stderr()).contains("Permission denied");
      String mount = sh(s, "grep ' /tmp ' /proc/mounts").stdout();
      assertThat(mount).contains("tmpfs", "nosuid", "nodev", "noexec", "size=16384k");
      ExecResult fill = sh(s, "head -c 20000000 /dev/zero > /tmp/big");
      assertThat(fill.stderr()).contains("No space left on device");
    }

    @Test
    @DisplayName("has its socket directory at /run/quarry, a fixed hash seed and nothing secret in its environment")
    void environment() {
      Set<String> names = sh(s, "env").stdout().lines().map(l -> l.split("=", 2)[0])
          .collect(Collectors.toSet());
      assertThat(names).contains("QUARRY_SOCKET").allMatch(n -> Set.of("QUARRY_SOCKET", "PYTHONHASHSEED", "PATH",
          "HOME", "HOSTNAME", "PWD", "SHLVL", "_").contains(n), "only harmless variables");
      assertThat(sh(s, "echo $QUARRY_SOCKET").stdout().trim()).isEqualTo("/run/quarry/sandbox.sock");
      // One hash seed in every sandbox: a cell rebuilt from an analysis' record prints a set as it did.
      assertThat(sh(s, "echo $PYTHONHASHSEED").stdout().trim()).isEqualTo("0");
      assertThat(sh(s, "grep ' /run/quarry ' /proc/mounts").stdout()).contains(" rw,");
      assertThat(Files.isDirectory(s.runDir())).isTrue();
      assertThat(s.socketPath()).isEqualTo(s.runDir().resolve("sandbox.sock"));
    }

    @Test
    @DisplayName("has the nofile limit and carries its labels")
    void limitsAndLabels() {
      assertThat(sh(s, "ulimit -n").stdout().trim()).isEqualTo("256");
      var inspect = fx.docker.inspectContainerCmd(s.containerId()).exec();
      assertThat(inspect.getConfig().getLabels())
          .containsEntry("quarry.sandbox", "1")
          .containsEntry("quarry.sandbox.id", s.id())
          .containsEntry("quarry.gateway", fx.gatewayId)
          .containsEntry("quarry.tenant", fx.tenantA.toString())
          .containsEntry("quarry.created", Long.toString(s.createdAt().getEpochSecond()));
      var host = inspect.getHostConfig();
      assertThat(host.getMemory()).isEqualTo(SandboxLimits.DEFAULTS.memoryBytes());
      assertThat(host.getMemorySwap()).isEqualTo(SandboxLimits.DEFAULTS.memoryBytes());
      assertThat(host.getNanoCPUs()).isEqualTo(SandboxLimits.DEFAULTS.nanoCpus());
      assertThat(host.getPidsLimit()).isEqualTo(SandboxLimits.DEFAULTS.pidsLimit());
      assertThat(host.getAutoRemove()).isFalse();
      assertThat(host.getNetworkMode()).isEqualTo("none");
    }
  }

  @Test
  @DisplayName("cannot hold more processes than its pids limit (fork bomb contained)")
  void pidsLimit() {
    Sandbox s = launcher.launch(fx.tenantA, fx.documents(fx.tenantA),
        SandboxLimits.DEFAULTS.withPidsLimit(24), SandboxFixture.IDLE);
    try {
      ExecResult r = python(s, """
          import os, signal
          children, error = [], None
          for _ in range(200):
              try:
                  pid = os.fork()
              except OSError as e:
                  error = type(e).__name__
                  break
              if pid == 0:
                  signal.pause()
              children.append(pid)
          print(len(children), error)
          for pid in children:
              os.kill(pid, signal.SIGKILL)
          for pid in children:
              os.waitpid(pid, 0)
          """);
      String[] out = r.stdout().trim().split(" ");
      assertThat(Integer.parseInt(out[0])).isLessThan(24);
      assertThat(out[1]).isEqualTo("BlockingIOError");
      // The sandbox itself survives its code's fork bomb.
      assertThat(sh(s, "echo alive").stdout()).isEqualTo("alive\n");
    } finally {
      launcher.remove(s);
    }
  }

  @Test
  @DisplayName("is OOM-killed at its memory limit, and the engine says so")
  void memoryLimit() {
    Sandbox s = launcher.launch(fx.tenantA, fx.documents(fx.tenantA),
        SandboxLimits.DEFAULTS.withMemoryBytes(48L << 20),
        List.of("python3", "-c", "b = b'x' * (200 * 1024 * 1024); print(len(b))"));
    try {
      ContainerLauncher.ContainerState state = launcher.exitState(s, Duration.ofSeconds(60));
      assertThat(state.exitCode()).isEqualTo(137);
      assertThat(state.oomKilled()).isTrue();
      assertThat(state.running()).isFalse();
    } finally {
      launcher.remove(s);
    }
  }

  @Test
  @DisplayName("is gone with its directory after kill and remove, and both are idempotent")
  void killAndRemove() {
    Sandbox s = launcher.launch(fx.tenantA, fx.documents(fx.tenantA));
    assertThat(launcher.liveIds()).contains(s.id());
    assertThat(launcher.kill(s)).isTrue();
    assertThat(launcher.state(s).running()).isFalse();
    assertThat(launcher.kill(s)).as("killing a stopped sandbox").isFalse();
    launcher.remove(s);
    assertThat(fx.exists(s.containerId())).isFalse();
    assertThat(s.runDir()).doesNotExist();
    assertThat(launcher.liveIds()).doesNotContain(s.id());
    launcher.remove(s);
    assertThatThrownBy(() -> launcher.state(s))
        .isInstanceOfSatisfying(ContainerException.class, e -> assertThat(e.reason()).isEqualTo(Reason.NOT_FOUND));
  }

  @Test
  @DisplayName("leaves nothing behind when its image is missing")
  void missingImage() throws Exception {
    SandboxSettings base = fx.settings();
    ContainerLauncher noImage = new ContainerLauncher(fx.docker, new SandboxSettings(base.dockerHost(),
        "quarry-no-such-image:none", base.command(), SandboxSettings.NOBODY, base.gatewayId(), base.runRoot(),
        base.limits(), base.maxLimits(), 0, base.reapInterval(), false));
    assertThatThrownBy(() -> noImage.launch(fx.tenantA, fx.documents(fx.tenantA)))
        .isInstanceOfSatisfying(ContainerException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.IMAGE_MISSING);
          assertThat(e.getMessage()).contains("quarry-no-such-image:none");
        });
    assertThat(noImage.liveIds()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
  }

  @Test
  @DisplayName("leaves nothing behind when it fails to start")
  void startFailure() throws Exception {
    SandboxSettings base = fx.settings();
    // Users are resolved when the container starts, so an unknown one fails the start, not the create.
    ContainerLauncher noUser = new ContainerLauncher(fx.docker, new SandboxSettings(base.dockerHost(),
        base.image(), base.command(), "no-such-user", base.gatewayId(), base.runRoot(), base.limits(),
        base.maxLimits(), 0, base.reapInterval(), false));
    int before = fx.containers().size();
    assertThatThrownBy(() -> noUser.launch(fx.tenantA, fx.documents(fx.tenantA)))
        .isInstanceOfSatisfying(ContainerException.class, e -> {
          assertThat(e.getMessage()).contains("start sandbox container", "no-such-user");
          assertThat(e.reason()).isIn(Reason.REJECTED, Reason.ENGINE_ERROR);
        });
    assertThat(fx.containers()).hasSize(before);
    assertThat(fx.runDirs()).isEmpty();
    assertThat(noUser.liveIds()).isEmpty();
  }

  @Test
  @DisplayName("is refused, naming the problem, for a missing documents directory (without its host path, which"
      + " mount privacy hides) or limits above the maximum")
  void badInput() {
    assertThatThrownBy(() -> launcher.launch(fx.tenantA, fx.root.resolve("nowhere")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("documents directory does not exist")
        .hasMessageNotContaining("nowhere").hasMessageNotContaining(fx.root.toString());
    assertThatThrownBy(() -> launcher.launch(fx.tenantA, fx.documents(fx.tenantA),
        SandboxLimits.DEFAULTS.withMemoryBytes(SandboxLimits.MAXIMUMS.memoryBytes() + 1), SandboxFixture.IDLE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("memoryBytes");
    assertThat(launcher.liveIds()).isEmpty();
  }

  @Test
  @DisplayName("reports an unreachable engine as such")
  void unreachableEngine() throws Exception {
    try (var docker = ContainerLauncher.connect("unix://" + fx.root.resolve("no-docker.sock"))) {
      ContainerLauncher nowhere = new ContainerLauncher(docker, fx.settings());
      assertThatThrownBy(() -> nowhere.launch(fx.tenantA, fx.documents(fx.tenantA)))
          .isInstanceOfSatisfying(ContainerException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.ENGINE_UNREACHABLE));
      assertThat(fx.runDirs()).isEmpty();
    }
  }

  @Test
  @DisplayName("limits: defaults within maximums, env settings bounded and named")
  void limitsConfig() {
    assertThat(SandboxLimits.DEFAULTS.requireWithin(SandboxLimits.MAXIMUMS)).isEqualTo(SandboxLimits.DEFAULTS);
    SandboxLimits fromEnv = SandboxLimits.fromEnv(Map.of("QUARRY_SANDBOX_MEMORY_MIB", "512",
        "QUARRY_SANDBOX_MILLI_CPUS", "500"));
    assertThat(fromEnv.memoryBytes()).isEqualTo(512L << 20);
    assertThat(fromEnv.nanoCpus()).isEqualTo(500_000_000L);
    assertThat(fromEnv.pidsLimit()).isEqualTo(SandboxLimits.DEFAULTS.pidsLimit());
    assertThatThrownBy(() -> SandboxLimits.fromEnv(Map.of("QUARRY_SANDBOX_PIDS", "100000")))
        .hasMessageContaining("QUARRY_SANDBOX_PIDS=100000 is out of bounds");
    assertThatThrownBy(() -> SandboxLimits.fromEnv(Map.of("QUARRY_SANDBOX_NOFILE", "lots")))
        .hasMessageContaining("QUARRY_SANDBOX_NOFILE=lots is not an integer");
  }

  @Test
  @DisplayName("settings: defaults from an empty environment, bad values named")
  void settingsConfig() {
    SandboxSettings s = SandboxSettings.fromEnv(Map.of());
    assertThat(s.dockerHost()).isEqualTo("unix:///var/run/docker.sock");
    assertThat(s.command()).isEmpty();
    assertThat(s.gatewayId()).startsWith("gw-");
    assertThat(SandboxSettings.fromEnv(Map.of()).gatewayId()).isNotEqualTo(s.gatewayId());
    assertThat(s.limits()).isEqualTo(SandboxLimits.DEFAULTS);
    assertThat(SandboxSettings.fromEnv(Map.of("QUARRY_GATEWAY_ID", "pod-7", "QUARRY_SANDBOX_COMMAND",
        "python3 -m runner")).command()).containsExactly("python3", "-m", "runner");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_GATEWAY_ID", "bad id/..")))
        .hasMessageContaining("QUARRY_GATEWAY_ID='bad id/..'");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_POOL_PER_TENANT", "65")))
        .hasMessageContaining("QUARRY_SANDBOX_POOL_PER_TENANT=65 is out of bounds");
  }
}
