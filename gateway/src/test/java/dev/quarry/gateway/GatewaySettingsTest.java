package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.config.InvalidSetting;
import dev.quarry.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("Every setting a gateway reads takes effect when it is given in QUARRY_CONFIG_FILE")
class GatewaySettingsTest {
  private static final Pattern RANGE = Pattern.compile("(-?[\\d.]+)–(-?[\\d.]+|`[A-Z0-9_]+`)");
  /** Fixed in every load, so that two loads compare equal unless a setting changed something. */
  private static final Map<String, String> BASE = Map.of("QUARRY_GATEWAY_ID", "gw-settings-test");

  @TempDir Path dir;

  @Test
  @DisplayName("each setting, alone in the file at a value other than its default, changes what the gateway is given")
  void everySettingFromTheFile() throws IOException {
    GatewaySettings defaults = GatewaySettings.read(BASE);
    List<Settings.Definition> definitions = GatewaySettings.definitions();
    assertThat(definitions).extracting(Settings.Definition::name)
        .contains("QUARRY_MODEL_BASE_URL", "QUARRY_MODEL", "QUARRY_MODEL_TEMPERATURE", "QUARRY_MAX_ANALYSIS_MS",
            "QUARRY_SANDBOX_IMAGE", "QUARRY_SANDBOX_MEMORY_MIB", "QUARRY_SANDBOX_STALL_MS", "QUARRY_HTTP_PORT",
            "QUARRY_DRAIN_GRACE_SECONDS", "OPENAI_API_KEY");
    List<String> ignored = new ArrayList<>();
    int checked = 0;
    for (Settings.Definition d : definitions) {
      if (d.name().equals("QUARRY_GATEWAY_ID")) {
        continue; // fixed in BASE; checked below
      }
      String value = otherThanDefault(d);
      Path file = Files.writeString(dir.resolve(d.name() + ".yaml"), d.name() + ": \"" + value + "\"\n");
      Map<String, String> env = new HashMap<>(BASE);
      env.put("QUARRY_CONFIG_FILE", file.toString());
      GatewaySettings loaded = GatewaySettings.load(env);
      if (loaded.equals(defaults)) {
        ignored.add(d.name() + "=" + value);
      }
      checked++;
    }
    assertThat(checked).isGreaterThan(60);
    assertThat(ignored).as("settings given in the file that changed nothing").isEmpty();

    Path file = Files.writeString(dir.resolve("id.yaml"), "QUARRY_GATEWAY_ID: pod-from-file\n");
    assertThat(GatewaySettings.load(Map.of("QUARRY_CONFIG_FILE", file.toString())).sandboxes().gatewayId())
        .isEqualTo("pod-from-file");
  }

  @Test
  @DisplayName("a bad agent, sandbox or ops setting in the file fails with the one error type, naming it")
  void badSettingsFromTheFile() throws IOException {
    for (String line : List.of("QUARRY_MODEL_TEMPERATURE: 9", "QUARRY_SANDBOX_REAP_ALL_ON_START: maybe",
        "QUARRY_SANDBOX_CELL_SECONDS: 500", "QUARRY_DRAIN_GRACE_SECONDS: soon", "QUARRY_GATEWAY_ID: \"a b\"",
        "QUARRY_EXECUTIONS: 101")) {
      Path file = Files.writeString(dir.resolve("bad.yaml"), line + "\n");
      String name = line.substring(0, line.indexOf(':'));
      assertThatThrownBy(() -> GatewaySettings.load(Map.of("QUARRY_CONFIG_FILE", file.toString())))
          .as(line).isInstanceOf(InvalidSetting.class).hasMessageContaining(name);
    }
  }

  /** A value within the setting's bounds that differs from its default. */
  private static String otherThanDefault(Settings.Definition d) {
    String dflt = d.defaultValue();
    if (d.bounds().equals("true, false")) {
      return Boolean.toString(!Boolean.parseBoolean(dflt));
    }
    Matcher range = RANGE.matcher(d.bounds());
    if (range.lookingAt()) {
      String min = range.group(1);
      boolean decimal = min.contains(".") || dflt.contains(".");
      if (decimal) {
        double v = Double.parseDouble(dflt) == Double.parseDouble(min) ? Double.parseDouble(min) + 0.5
            : Double.parseDouble(min);
        return Double.toString(v);
      }
      // One below the default where there is room: a maximum stays above what other defaults need.
      long lo = Long.parseLong(min);
      long v = Long.parseLong(dflt);
      return Long.toString(v > lo ? v - 1 : lo + 1);
    }
    if (d.bounds().contains(", ")) {
      for (String option : d.bounds().split(", ")) {
        if (!option.equals(dflt)) {
          return option;
        }
      }
    }
    if (d.name().endsWith("_DIR") || d.name().endsWith("_FILE")) {
      return "/tmp/quarry-settings-test/" + d.name().toLowerCase();
    }
    if (d.name().contains("URL")) {
      return "http://settings-test.invalid/v1";
    }
    if (d.name().equals("QUARRY_ADMIN_TOKEN")) {
      return "admin-token-from-the-file-0123456789";
    }
    if (d.name().equals("DOCKER_HOST")) {
      return "unix:///tmp/quarry-settings-test.sock";
    }
    return "value-from-file-" + d.name().toLowerCase();
  }
}
