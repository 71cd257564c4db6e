package dev.quarry.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.RecordComponent;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Copies of settings records")
class RecordsTest {
  record Pair(int count, String name) {
    Pair {
      if (count < 0) {
        throw new IllegalArgumentException("count must not be negative");
      }
    }
  }

  @Test
  @DisplayName("change only the named components, keep every other, and run the record's own checks")
  void copies() {
    Pair p = new Pair(1, "a");
    assertThat(Records.with(p, "count", 2)).isEqualTo(new Pair(2, "a"));
    assertThat(Records.with(p, Map.of("count", 3, "name", "b"))).isEqualTo(new Pair(3, "b"));
    assertThat(p).isEqualTo(new Pair(1, "a"));
    assertThatThrownBy(() -> Records.with(p, "count", -1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("count must not be negative");
  }

  @Test
  @DisplayName("refuse a name that is not a component, naming it")
  void unknownComponent() {
    assertThatThrownBy(() -> Records.with(new Pair(1, "a"), "size", 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("size");
  }

  @Test
  @DisplayName("every wither of Config changes its own setting and nothing else")
  void configWithers() throws Exception {
    Config c = Config.fromEnv(Map.of());
    assertDiffersOnly(c, c.withDatabase("other"), "pgDatabase");
    assertDiffersOnly(c, c.withDataDir(Path.of("/elsewhere")), "dataDir");
    assertDiffersOnly(c, c.withHttpPort(1234), "httpPort");
    assertDiffersOnly(c, c.withMaxUploadBytes(77), "maxUploadBytes");
    assertDiffersOnly(c, c.withTenancy(c.tenancy().withAdminToken("t0k3n-for-the-test")), "tenancy");
    assertDiffersOnly(c, c.withBodyTimeoutMs(999), "bodyTimeoutMs");
    assertDiffersOnly(c, c.withSseHeartbeatSeconds(7), "sseHeartbeatSeconds");
  }

  private static void assertDiffersOnly(Config before, Config after, String component) throws Exception {
    for (RecordComponent rc : Config.class.getRecordComponents()) {
      Object a = rc.getAccessor().invoke(before);
      Object b = rc.getAccessor().invoke(after);
      if (rc.getName().equals(component)) {
        assertThat(b).as(component).isNotEqualTo(a);
      } else {
        assertThat(b).as(rc.getName()).isEqualTo(a);
      }
    }
  }
}
