package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandbox's second wall in a real container of the real image: the runner serving a session is
 * under its own seccomp filter on top of the engine's, and that filter, loaded by the image's own
 * Python and libseccomp, refuses what escaped code would try (sandbox-image/runner/tests/wall_attacks.py,
 * run with {@code docker exec} as the sandbox user against the runner's own process).
 */
class SecondWallTest {
  @TempDir
  static Path tmp;
  static SessionFixture sf;

  @BeforeAll
  static void setUp() throws Exception {
    sf = new SessionFixture(tmp, 0);
  }

  @AfterAll
  static void tearDown() throws Exception {
    sf.close();
  }

  @Test
  @DisplayName("the runner serves cells and callbacks under a seccomp filter of its own, on top of the engine's")
  void runnerIsFiltered() throws Exception {
    SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
    try {
      CellOutcome out = await(s.execute("docs = await list_documents()\nprint(len(docs) >= 0)\n6 * 7",
          sf.options(), null));
      assertThat(out.success()).as(out.toToolResult().encode()).isTrue();
      assertThat(out.stdout()).isEqualTo("True\n42");

      String container = containerOf(s);
      int runner = runnerPid(container);
      Map<String, String> mine = status(container, runner);
      Map<String, String> init = status(container, 1);
      assertThat(mine.get("Seccomp")).isEqualTo("2");
      // docker-init carries only the engine's filter; the runner has stacked its own on top.
      assertThat(Integer.parseInt(mine.get("Seccomp_filters")))
          .isGreaterThan(Integer.parseInt(init.get("Seccomp_filters")));
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("in the image, the filter refuses exec, fork, sockets, ptrace and writes to the runner's memory")
  void filterHoldsInTheImage() throws Exception {
    SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
    try {
      String container = containerOf(s);
      String runner = Integer.toString(runnerPid(container));
      String attacks = Files.readString(locate("sandbox-image/runner/tests/wall_attacks.py"));
      String[] result = exec(container, List.of("env", "TARGET_PID=" + runner, "PROBE_FILE=/tmp/probe",
          "python3", "-s", "-c", attacks));
      assertThat(result[1]).as("stderr").isEmpty();
      JsonObject results = new JsonObject(result[0].strip());
      assertThat(results.remove("in_force")).isEqualTo(true);
      for (String needed : List.of("read a file", "thread", "signal to itself")) {
        assertThat(results.remove(needed)).as(needed).isEqualTo(true);
      }
      assertThat(results.remove("kill itself with 0")).isEqualTo("done");
      assertThat(results.size()).isGreaterThanOrEqualTo(20);
      results.forEach(e -> assertThat(e.getValue()).as(e.getKey() + " must be refused with EPERM").isEqualTo(1));
      // The session's runner was not touched and still answers.
      assertThat(await(s.execute("1 + 1", sf.options(), null)).stdout()).isEqualTo("2");
    } finally {
      await(s.close());
    }
  }

  private static String containerOf(SandboxSession s) {
    return sf.fx.docker.listContainersCmd()
        .withLabelFilter(Map.of(ContainerLauncher.LABEL_SANDBOX_ID, s.id())).exec().get(0).getId();
  }

  /** The pid, in the container, of the process running quarry_runner. */
  private static int runnerPid(String container) throws Exception {
    String[] out = exec(container, List.of("python3", "-s", "-c", """
        import os
        for pid in filter(str.isdigit, os.listdir('/proc')):
            try:
                cmd = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')
            except OSError:
                continue
            if cmd[0].endswith(b'python3') and b'quarry_runner' in cmd and b'-c' not in cmd:  # not docker-init
                print(pid)
        """));
    List<String> pids = out[0].lines().toList();
    assertThat(pids).as("one runner process: " + out[1]).hasSize(1);
    return Integer.parseInt(pids.get(0));
  }

  private static Map<String, String> status(String container, int pid) throws Exception {
    String[] out = exec(container, List.of("cat", "/proc/" + pid + "/status"));
    Map<String, String> fields = new java.util.HashMap<>();
    out[0].lines().map(l -> l.split(":\\s*", 2)).filter(kv -> kv.length == 2).forEach(kv -> fields.put(kv[0], kv[1]));
    return fields;
  }

  /** Runs a command in the container as the sandbox's user; returns {stdout, stderr}. */
  private static String[] exec(String container, List<String> command) throws Exception {
    String id = sf.fx.docker.execCreateCmd(container).withCmd(command.toArray(String[]::new))
        .withAttachStdout(true).withAttachStderr(true).exec().getId();
    StringBuilder stdout = new StringBuilder();
    StringBuilder stderr = new StringBuilder();
    ResultCallback.Adapter<Frame> callback = new ResultCallback.Adapter<>() {
      @Override
      public void onNext(Frame frame) {
        String text = new String(frame.getPayload(), StandardCharsets.UTF_8);
        synchronized (stdout) {
          (frame.getStreamType() == com.github.dockerjava.api.model.StreamType.STDERR ? stderr : stdout).append(text);
        }
      }
    };
    assertThat(sf.fx.docker.execStartCmd(id).exec(callback).awaitCompletion(60, TimeUnit.SECONDS))
        .as("docker exec finished").isTrue();
    synchronized (stdout) {
      return new String[] {stdout.toString(), stderr.toString()};
    }
  }

  private static Path locate(String relative) {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.exists(dir.resolve(relative))) {
        return dir.resolve(relative);
      }
    }
    throw new IllegalStateException(relative + " not found above " + Path.of("").toAbsolutePath());
  }
}
