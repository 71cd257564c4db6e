package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.ContainerLauncher.ExecResult;
import java.io.IOException;
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

/**
 * What {@code /proc/self/mountinfo} inside a real sandbox shows of the host: with the documents
 * and run directories on filesystems of their own (here tmpfs, as README's security section asks),
 * no host path of either; on the host's root filesystem, their full host paths (which is what
 * {@link MountPrivacy} reports, and the gateway's readiness says). Mounting needs root, as
 * {@code ./quarry test} runs.
 */
@DisplayName("A sandbox's mountinfo and the host paths of the gateway's directories")
class MountInfoTest {
  @TempDir static Path tmp;
  static SandboxFixture fx;
  static Path privateData;
  static Path privateRun;
  static final UUID TENANT = UUID.randomUUID();

  @BeforeAll
  static void setUp() throws Exception {
    fx = new SandboxFixture(tmp);
    privateData = Files.createDirectories(tmp.resolve("private-data"));
    privateRun = Files.createDirectories(tmp.resolve("private-run"));
    mountTmpfs(privateData);
    mountTmpfs(privateRun);
    Path doc = Files.createDirectories(privateData.resolve("documents").resolve(TENANT.toString()).resolve("doc"));
    Files.writeString(doc.resolve("content.txt"), "a document");
    run("chmod", "-R", "a+rX", privateData.toString(), tmp.toString());
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      assertThat(fx.containers()).as("containers left behind").isEmpty();
    } finally {
      fx.close();
      run("umount", privateData.toString());
      run("umount", privateRun.toString());
    }
  }

  private static void mountTmpfs(Path dir) throws Exception {
    assertThat(run("mount", "-t", "tmpfs", "-o", "size=16m,mode=755", "tmpfs", dir.toString()))
        .as("mounting a tmpfs (the test runs as root, as ./quarry test does)").isZero();
  }

  private static int run(String... command) throws IOException, InterruptedException {
    return new ProcessBuilder(command).inheritIO().start().waitFor();
  }

  private static String mountinfo(ContainerLauncher launcher, Sandbox s) {
    ExecResult r = launcher.exec(s, List.of("cat", "/proc/self/mountinfo"), Duration.ofSeconds(30));
    assertThat(r.exitCode()).as(r.stderr()).isZero();
    return r.stdout();
  }

  @Test
  @DisplayName("documents and run directories on filesystems of their own: mountinfo shows no host path of either")
  void ownFilesystems() throws Exception {
    SandboxSettings base = fx.settings();
    ContainerLauncher launcher = new ContainerLauncher(fx.docker, new SandboxSettings(base.dockerHost(), base.image(),
        base.command(), base.user(), base.gatewayId(), privateRun, base.limits(), base.maxLimits(), 0,
        base.reapInterval(), false));
    Sandbox s = launcher.launch(TENANT, privateData.resolve("documents").resolve(TENANT.toString()));
    try {
      String info = mountinfo(launcher, s);
      assertThat(info).contains(" /documents ").contains(" /run/quarry ")
          .doesNotContain(tmp.toString()).doesNotContain(tmp.toRealPath().toString())
          .doesNotContain(privateData.toString()).doesNotContain(privateRun.toString());
      // What shows instead: the paths below the gateway's own directories, nothing of the host's.
      assertThat(info).contains("/documents/" + TENANT + " /documents ");
      assertThat(MountPrivacy.hostPathShown(privateData.resolve("documents"), privateData)).isNull();
      assertThat(MountPrivacy.hostPathShown(privateRun, privateRun)).isNull();
    } finally {
      launcher.remove(s);
    }
  }

  @Test
  @DisplayName("on the host's own filesystem: mountinfo shows the host paths, and MountPrivacy says which")
  void hostFilesystem() throws Exception {
    ContainerLauncher launcher = fx.launcher();
    Sandbox s = launcher.launch(fx.tenantA, fx.documents(fx.tenantA));
    try {
      String info = mountinfo(launcher, s);
      String hostDocuments = fx.documents(fx.tenantA).toRealPath().toString();
      assertThat(info).contains(hostDocuments);
      assertThat(MountPrivacy.hostPathShown(fx.documentsRoot, tmp)).isEqualTo(fx.documentsRoot.toRealPath().toString());
      assertThat(MountPrivacy.hostPathShown(fx.runRoot, fx.runRoot)).isEqualTo(fx.runRoot.toRealPath().toString());
    } finally {
      launcher.remove(s);
    }
  }
}
