package dev.quarry.gateway;

import dev.quarry.agent.AgentSettings;
import dev.quarry.config.Config;
import dev.quarry.config.ConfigSource;
import dev.quarry.config.InvalidSetting;
import dev.quarry.config.Settings;
import dev.quarry.sandbox.SandboxSettings;
import java.util.List;
import java.util.Map;

/**
 * Every setting of a gateway, read once by one {@link Settings} from one map (the environment over
 * the optional {@code QUARRY_CONFIG_FILE}) and handed to each part as its own record. Nothing below
 * the entry point reads the environment: a setting given in the file reaches the part that uses it
 * exactly as one given in the environment, and a bad one fails here with {@link InvalidSetting}.
 *
 * @param config     the knowledge base, search, HTTP and tenancy settings
 * @param agent      the model endpoint and the analyses' budgets
 * @param sandboxes  how sandboxes run and what one tenant may take of them
 * @param ops        shutdown and readiness
 */
public record GatewaySettings(Config config, AgentSettings agent, SandboxSettings sandboxes, OpsSettings ops) {

  /** From a process' environment: {@code QUARRY_CONFIG_FILE} read and merged under it. */
  public static GatewaySettings load(Map<String, String> environment) {
    return read(ConfigSource.load(environment));
  }

  /** From an already merged configuration map. */
  public static GatewaySettings read(Map<String, String> values) {
    return read(new Settings(values));
  }

  /** Every setting a gateway reads, with its default and bounds (the README's table is checked against it). */
  public static List<Settings.Definition> definitions() {
    Settings s = new Settings(Map.of());
    read(s);
    return s.definitions();
  }

  private static GatewaySettings read(Settings s) {
    Config config = Config.read(s);
    AgentSettings agent = AgentSettings.read(s);
    SandboxSettings sandboxes = SandboxSettings.read(s);
    return new GatewaySettings(config, agent, sandboxes, OpsSettings.read(s, sandboxes.dockerHost()));
  }

  /** {@code config} with every other part at its defaults (no model endpoint). */
  public static GatewaySettings of(Config config) {
    return new GatewaySettings(config, AgentSettings.DEFAULTS, SandboxSettings.fromEnv(Map.of()),
        OpsSettings.DEFAULTS);
  }

  public GatewaySettings withConfig(Config c) {
    return new GatewaySettings(c, agent, sandboxes, ops);
  }

  public GatewaySettings withAgent(AgentSettings a) {
    return new GatewaySettings(config, a, sandboxes, ops);
  }

  public GatewaySettings withSandboxes(SandboxSettings s) {
    return new GatewaySettings(config, agent, s, ops);
  }

  public GatewaySettings withOps(OpsSettings o) {
    return new GatewaySettings(config, agent, sandboxes, o);
  }
}
