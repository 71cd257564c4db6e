package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.proto.sandbox.v1.CellStatus;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("A sandbox session")
class SandboxSessionTest {
  @TempDir static Path tmp;
  static SessionFixture sf;

  @BeforeAll
  static void setUp() throws Exception {
    sf = new SessionFixture(tmp, 0);
  }

  @AfterAll
  static void tearDown() throws Exception {
    sf.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    sf.assertClean();
  }

  @Test
  @DisplayName("runs a cell over gRPC: printed output, then the REPL value")
  void roundTrip() throws Exception {
    SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
    try {
      CellOutcome out = await(s.execute("print('hi')\n6 * 7", sf.options(), CellListener.NONE));
      assertThat(out.status()).isEqualTo(CellStatus.CELL_STATUS_OK);
      assertThat(out.success()).isTrue();
      assertThat(out.stdout()).isEqualTo("hi\n42");
      assertThat(out.error()).isNull();
      assertThat(out.toToolResult().getBoolean("success")).isTrue();
    } finally {
      await(s.close());
    }
  }
}
