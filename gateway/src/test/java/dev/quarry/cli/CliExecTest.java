package dev.quarry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("quarry exec")
class CliExecTest {
  @TempDir static Path tmp;
  static TestGateway gateway;

  @BeforeAll
  static void setUp() throws Exception {
    String image = RunnerImage.ensure();
    SandboxSettings settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image, List.of(), "",
        "test-" + UUID.randomUUID().toString().substring(0, 8), Files.createDirectories(tmp.resolve("run")),
        SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false);
    gateway = TestGateway.start(settings);
  }

  @AfterAll
  static void tearDown() throws Exception {
    gateway.close();
  }

  @Test
  @DisplayName("prints what the program prints and its value, and exits 0")
  void success() throws Exception {
    Path program = Files.writeString(tmp.resolve("ok.py"), "print('hello from the sandbox')\nlen(await list_documents())\n");
    CliRun run = CliRun.of("exec", "--url", gateway.url(), program.toString());
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out()).isEqualTo("hello from the sandbox\n0\n");
  }

  @Test
  @DisplayName("shows the traceback and the typed error, and exits 1, when the program fails")
  void failure() throws Exception {
    Path program = Files.writeString(tmp.resolve("bad.py"), "print('before')\n1 / 0\n");
    CliRun run = CliRun.of("exec", "--url", gateway.url(), program.toString());
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEqualTo("before\n");
    assertThat(run.err()).contains("line 2").contains("ZeroDivisionError: division by zero");
  }

  @Test
  @DisplayName("names a missing file and a bad limit")
  void badInput() throws Exception {
    CliRun missing = CliRun.of("exec", "--url", gateway.url(), tmp.resolve("nope.py").toString());
    assertThat(missing.exitCode()).isEqualTo(1);
    assertThat(missing.err()).contains("no such file");
    Path program = Files.writeString(tmp.resolve("fine.py"), "1\n");
    CliRun badLimit = CliRun.of("exec", "--url", gateway.url(), "--wall-time-ms", "0", program.toString());
    assertThat(badLimit.exitCode()).isEqualTo(1);
    assertThat(badLimit.err()).contains("invalid_limits").contains("'limits.wall_time_ms'");
  }
}
