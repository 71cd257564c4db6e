package dev.quarry.gateway;

import dev.quarry.config.Config;
import dev.quarry.config.Settings;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The README's configuration table and the code agree")
class ConfigDocsTest {
  private static final Path ROOT = RepoFiles.root();
  private static final Pattern ROW = Pattern.compile("^\\| `([A-Z][A-Z0-9_]*)`[^|]*\\|([^|]*)\\|([^|]*)\\|", Pattern.MULTILINE);
  private static final Pattern SETTING_LITERAL = Pattern.compile("\"((?:QUARRY|OPENAI)_[A-Z0-9_]+|DOCKER_HOST)\"");

  record Row(String defaultValue, String bounds) {}

  private static Map<String, Row> table() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String section = readme.substring(readme.indexOf("## Configuration"));
    Map<String, Row> rows = new TreeMap<>();
    Matcher m = ROW.matcher(section);
    while (m.find()) {
      rows.put(m.group(1), new Row(m.group(2).trim(), m.group(3).trim()));
    }
    return rows;
  }

  @Test
  @DisplayName("every setting a gateway reads (GatewaySettings: Config, agent, sandboxes, ops) has a row with its default and its bounds")
  void typedSettings() throws IOException {
    Map<String, Row> table = table();
    List<Settings.Definition> definitions = new ArrayList<>(GatewaySettings.definitions());
    List<String> problems = new ArrayList<>();
    for (Settings.Definition d : definitions) {
      Row row = table.get(d.name());
      if (row == null) {
        problems.add(d.name() + ": no row");
        continue;
      }
      if (!row.defaultValue().equals(d.defaultValue())) {
        problems.add(d.name() + ": README default '" + row.defaultValue() + "', code default '" + d.defaultValue() + "'");
      }
      if (!row.bounds().startsWith(d.bounds())) {
        problems.add(d.name() + ": README bounds '" + row.bounds() + "', code bounds '" + d.bounds() + "'");
      }
    }
    assertThat(definitions).hasSizeGreaterThan(15);
    assertThat(problems).isEmpty();
  }

  @Test
  @DisplayName("every setting name in the gateway's sources is documented in the configuration section")
  void everyVariableNamed() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String section = readme.substring(readme.indexOf("## Configuration"));
    Set<String> named = new TreeSet<>();
    try (Stream<Path> files = Files.walk(ROOT.resolve("gateway/src/main/java"))) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        Matcher m = SETTING_LITERAL.matcher(Files.readString(file));
        while (m.find()) {
          named.add(m.group(1));
        }
      }
    }
    assertThat(named).contains("QUARRY_HTTP_PORT", "QUARRY_SANDBOX_IMAGE", "QUARRY_DRAIN_GRACE_SECONDS");
    // A literal ending in '_' is a prefix the code completes (QUARRY_QUOTA_ + the quota's name).
    assertThat(named).allSatisfy(name -> assertThat(section).as("README configuration section")
        .contains(name.endsWith("_") ? "`" + name : "`" + name + "`"));
  }
}
