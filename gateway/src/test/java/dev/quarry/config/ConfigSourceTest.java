package dev.quarry.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("Configuration: environment over an optional file, validated with errors that name the setting")
class ConfigSourceTest {
  @TempDir Path dir;

  @Test
  @DisplayName("a YAML file supplies settings; the environment overrides it")
  void yamlUnderEnvironment() throws IOException {
    Path file = Files.writeString(dir.resolve("quarry.yaml"),
        "QUARRY_HTTP_PORT: 9090\nQUARRY_PG_POOL_SIZE: 4\nQUARRY_DRAIN_GRACE_SECONDS: 30\n");
    Map<String, String> settings = ConfigSource.load(Map.of(
        "QUARRY_CONFIG_FILE", file.toString(), "QUARRY_PG_POOL_SIZE", "8"));

    Config config = Config.fromEnv(settings);
    assertThat(config.httpPort()).isEqualTo(9090);
    assertThat(config.pgPoolSize()).isEqualTo(8);
    assertThat(dev.quarry.gateway.GatewaySettings.read(settings).ops().drainGrace()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  @DisplayName("a properties file works the same way")
  void properties() throws IOException {
    Path file = Files.writeString(dir.resolve("quarry.properties"), "QUARRY_PG_HOST = db.internal\n");
    assertThat(Config.fromEnv(ConfigSource.load(Map.of("QUARRY_CONFIG_FILE", file.toString()))).pgHost())
        .isEqualTo("db.internal");
  }

  @Test
  @DisplayName("a value out of bounds in the file fails with the setting's name and bounds")
  void outOfBoundsInFile() throws IOException {
    Path file = Files.writeString(dir.resolve("quarry.yml"), "QUARRY_PG_POOL_SIZE: 500\n");
    Map<String, String> settings = ConfigSource.load(Map.of("QUARRY_CONFIG_FILE", file.toString()));
    assertThatThrownBy(() -> Config.fromEnv(settings))
        .isInstanceOf(InvalidSetting.class)
        .hasMessage("QUARRY_PG_POOL_SIZE=500 is out of bounds [1, 200]");
    assertThatThrownBy(() -> dev.quarry.gateway.GatewaySettings.read(Map.of("QUARRY_DRAIN_GRACE_SECONDS", "soon")))
        .hasMessage("QUARRY_DRAIN_GRACE_SECONDS=soon is not an integer");
  }

  @Test
  @DisplayName("a missing file, an unknown format, a nested value or a key that is no setting name are refused by name")
  void badFiles() throws IOException {
    assertThatThrownBy(() -> ConfigSource.load(Map.of("QUARRY_CONFIG_FILE", dir.resolve("none.yaml").toString())))
        .isInstanceOf(InvalidSetting.class).hasMessageContaining("QUARRY_CONFIG_FILE=").hasMessageContaining("no such file");
    Path toml = Files.writeString(dir.resolve("quarry.toml"), "x = 1\n");
    assertThatThrownBy(() -> ConfigSource.load(Map.of("QUARRY_CONFIG_FILE", toml.toString())))
        .hasMessageContaining("must end in .properties, .yaml or .yml");
    Path nested = Files.writeString(dir.resolve("nested.yaml"), "QUARRY_PG_HOST:\n  primary: a\n");
    assertThatThrownBy(() -> ConfigSource.load(Map.of("QUARRY_CONFIG_FILE", nested.toString())))
        .hasMessageContaining("QUARRY_PG_HOST must be a single value");
    Path lower = Files.writeString(dir.resolve("lower.yaml"), "http_port: 1\n");
    assertThatThrownBy(() -> ConfigSource.load(Map.of("QUARRY_CONFIG_FILE", lower.toString())))
        .hasMessageContaining("key 'http_port' is not a setting name");
    Path broken = Files.writeString(dir.resolve("broken.yaml"), "QUARRY_PG_HOST: [unclosed\n");
    assertThatThrownBy(() -> ConfigSource.load(Map.of("QUARRY_CONFIG_FILE", broken.toString())))
        .isInstanceOf(InvalidSetting.class).hasMessageContaining("cannot be read");
  }

  @Test
  @DisplayName("a Config never shows its password or API key")
  void redacted() {
    Config config = Config.fromEnv(Map.of("QUARRY_PG_PASSWORD", "hunter2-secret", "QUARRY_EMBEDDING_API_KEY", "sk-live-123"));
    assertThat(config.toString()).doesNotContain("hunter2-secret", "sk-live-123").contains("***");
  }
}
