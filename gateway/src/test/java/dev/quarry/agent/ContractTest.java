package dev.quarry.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * docs/CONTRACT.md against the two things that must say the same: the sandbox's runner (read by
 * importing it, as the sandbox does) and the system prompt. AnalysisStreamingTest checks the keys
 * of every result inside a real sandbox; this checks the names and the limits, both ways.
 */
@DisplayName("docs/CONTRACT.md, the runner and the system prompt name the same calls, modules, built-ins, errors and limits")
class ContractTest {
  private static final Path ROOT = root();
  private static final Pattern CODE = Pattern.compile("`([^`]+)`");
  private static final Pattern CALL = Pattern.compile("`await (\\w+)\\(([^`]*)\\)`");
  private static final Pattern SETTING = Pattern.compile("`(QUARRY_\\w+)`");
  private static final Pattern NUMBER = Pattern.compile("^(\\d+)");
  private static final Pattern README_ROW = Pattern.compile("(?m)^\\| `(QUARRY_\\w+)` \\| ([^|]*) \\| ([^|]*) \\|");

  /** What the runner itself defines, printed by importing it. */
  private static final String INTROSPECT = """
      import builtins, inspect, json, sys
      sys.path.insert(0, sys.argv[1])
      from quarry_runner import executor, standins, validator
      e = executor.Executor(lambda *a: None)
      calls = {n: n + str(inspect.signature(f)) for n, f in e.namespace.items() if not n.startswith('_')}
      modules = {n: sorted(standins.StandInModule.members(m)) for n, m in e._modules.items()}
      print(json.dumps({
          'calls': calls,
          'modules': modules,
          'builtins': sorted(n for n in e.namespace['__builtins__'] if not n.startswith('_')),
          'python_builtins': sorted(n for n in dir(builtins) if not n.startswith('_')),
          'callback_errors': sorted(executor.CALLBACK_ERROR_TYPES),
          'limits': {'wall time per call': executor.DEFAULT_WALL_TIME_MS // 1000,
                     'printed output per call': executor.DEFAULT_MAX_OUTPUT_CHARS,
                     'code per cell': validator.MAX_SOURCE_CHARS,
                     'nesting of a cell': validator.MAX_AST_DEPTH,
                     'arguments of one call': executor.MAX_CALLBACK_ARGUMENT_CHARS},
      }))
      """;

  private static String contract;
  private static String prompt;
  private static JsonObject runner;

  @BeforeAll
  static void read() throws Exception {
    contract = Files.readString(ROOT.resolve("docs/CONTRACT.md"));
    // Line breaks are the prompt's layout, not its words.
    prompt = SystemPrompt.TEXT.replaceAll("\\s+", " ");
    Process p = new ProcessBuilder("python3", "-I", "-B", "-c", INTROSPECT, ROOT.resolve("sandbox-image/runner").toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    runner = new JsonObject(out.strip());
  }

  @Test
  @DisplayName("the calls: the same names and signatures in the contract, the runner's namespace and the prompt")
  void calls() {
    Map<String, String> inContract = calls(section(contract, "## Calls"));
    Map<String, String> inPrompt = calls(prompt);
    Map<String, String> inRunner = new HashMap<>();
    runner.getJsonObject("calls").forEach(e -> inRunner.put(e.getKey(), (String) e.getValue()));
    assertThat(inContract).containsOnlyKeys("search", "list_documents", "llm").isEqualTo(inRunner);
    assertThat(inPrompt).as("every call the prompt offers, with its signature").isEqualTo(inContract);
    assertThat(contract).contains("the variable `documents`");
    assertThat(prompt).contains("`documents`", "`execute_code`");
  }

  @Test
  @DisplayName("the modules and their names are the runner's stand-ins, and the prompt names each module and no other")
  void modules() {
    Map<String, List<String>> inContract = new LinkedHashMap<>();
    for (List<String> row : table(section(contract, "## The language"), "| module |")) {
      List<String> names = codes(row.get(1));
      inContract.put(codes(row.get(0)).get(0), row.get(1).contains("every public name") ? null : names);
    }
    JsonObject modules = runner.getJsonObject("modules");
    assertThat(inContract.keySet()).isEqualTo(modules.fieldNames());
    inContract.forEach((module, names) -> {
      List<String> real = modules.getJsonArray(module).stream().map(String.class::cast).toList();
      if (names == null) {
        assertThat(real).as(module + " offers its public names").contains("sqrt", "pi", "floor");
      } else if (module.equals("pathlib")) {
        assertThat(real).as(module).containsExactly(names.get(0));
      } else {
        assertThat(real).as(module).containsExactlyInAnyOrderElementsOf(names);
      }
    });
    int at = prompt.indexOf("the modules ");
    assertThat(at).as("the prompt's list of modules").isNotNegative();
    Set<String> inPrompt = new TreeSet<>(codes(prompt.substring(at, prompt.indexOf("(", at))));
    assertThat(inPrompt).as("the modules the prompt names").isEqualTo(inContract.keySet());
  }

  @Test
  @DisplayName("the built-in names are exactly the runner's, and every built-in the prompt names is one of them")
  void builtins() {
    String listed = section(contract, "## The language");
    listed = listed.substring(listed.indexOf("Built-in names:"), listed.indexOf("Nothing else:"));
    List<String> inContract = codes(listed);
    List<String> real = runner.getJsonArray("builtins").stream().map(String.class::cast).toList();
    assertThat(inContract).containsExactlyInAnyOrderElementsOf(real);
    Set<String> python = new TreeSet<>(runner.getJsonArray("python_builtins").stream().map(String.class::cast).toList());
    String language = prompt.substring(prompt.indexOf("# The language"), prompt.indexOf("# Working well"));
    for (String code : codes(language)) {
      if (python.contains(code) || code.endsWith("Error") || code.equals("LimitExceeded")) {
        assertThat(inContract).as("the prompt offers " + code).contains(code);
      }
    }
    String refused = section(contract, "## The language");
    refused = refused.substring(refused.indexOf("Nothing else:"));
    assertThat(codes(refused)).isNotEmpty().allSatisfy(name -> assertThat(real).doesNotContain(name));
  }

  @Test
  @DisplayName("the errors: a call raises only what the runner can raise and the gateway sends; every error type is in the prompt")
  void errors() throws IOException {
    List<String> raised = table(section(contract, "## Calls"), "| raised as |").stream()
        .map(row -> codes(row.get(0)).get(0)).toList();
    Set<String> sent = new TreeSet<>();
    Pattern failure = Pattern.compile("new CallbackFailure\\(\"(\\w+)\"");
    try (Stream<Path> files = Files.walk(ROOT.resolve("gateway/src/main/java"))) {
      for (Path f : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        Matcher m = failure.matcher(Files.readString(f));
        while (m.find()) {
          sent.add(m.group(1));
        }
      }
    }
    assertThat(raised).as("the types a call raises, as the gateway sends them").containsExactlyInAnyOrderElementsOf(sent);
    assertThat(runner.getJsonArray("callback_errors").getList()).as("types the runner raises a call's failure as")
        .containsAll(raised);
    List<String> types = table(section(contract, "## Errors"), "| type |").stream().map(row -> codes(row.get(0)).get(0)).toList();
    assertThat(types).contains("ForbiddenConstruct", "Timeout", "OutOfMemory");
    for (String type : types) {
      assertThat(prompt).as("the prompt names the error type " + type).contains("`" + type + "`");
    }
    for (String type : raised) {
      assertThat(prompt).as("the prompt names what a call raises: " + type).contains("`" + type + "`");
    }
  }

  @Test
  @DisplayName("every limit has the runner's or the README's default and maximum, and the prompt names each one the model can meet")
  void limits() throws IOException {
    Map<String, String[]> readme = new HashMap<>();
    Matcher m = README_ROW.matcher(Files.readString(ROOT.resolve("README.md")));
    while (m.find()) {
      readme.put(m.group(1), new String[] {m.group(2).trim(), m.group(3).trim()});
    }
    JsonObject runnerLimits = runner.getJsonObject("limits");
    List<List<String>> rows = table(section(contract, "## Limits"), "| limit |");
    assertThat(rows).hasSizeGreaterThan(10);
    List<String> problems = new ArrayList<>();
    for (List<String> row : rows) {
      String limit = row.get(0);
      long dflt = number(row.get(1));
      List<String> settings = new ArrayList<>();
      Matcher s = SETTING.matcher(row.get(3));
      while (s.find()) {
        settings.add(s.group(1));
      }
      if (runnerLimits.containsKey(limit) && runnerLimits.getLong(limit) != dflt) {
        problems.add(limit + ": the contract says " + dflt + ", the runner " + runnerLimits.getLong(limit));
      }
      if (settings.isEmpty()) {
        if (!runnerLimits.containsKey(limit)) {
          problems.add(limit + ": set neither by a setting nor by the runner");
        }
      } else {
        String[] first = readme.get(settings.get(0));
        if (first == null || number(first[0]) != dflt) {
          problems.add(limit + ": the contract's default " + dflt + ", the README's " + settings.get(0) + " "
              + (first == null ? "missing" : first[0]));
        }
        String max = settings.size() > 1 ? readme.getOrDefault(settings.get(1), new String[] {"", ""})[0]
            : first == null ? "" : first[1].replaceAll(".*[–-]", "");
        if (max.isEmpty() || number(max) != number(row.get(2))) {
          problems.add(limit + ": the contract's maximum " + row.get(2) + ", the README's " + max);
        }
      }
      // The model never meets what only POST /v1/executions has.
      if (!row.get(4).contains("POST /v1/executions") && !prompt.contains(limit)) {
        problems.add(limit + ": the prompt does not name it");
      }
    }
    assertThat(problems).isEmpty();
  }

  /** The text from a heading to the next heading of its level. */
  private static String section(String text, String heading) {
    int start = text.indexOf("\n" + heading + "\n");
    assertThat(start).as(heading).isNotNegative();
    int end = text.indexOf("\n## ", start + heading.length() + 2);
    return text.substring(start, end < 0 ? text.length() : end);
  }

  /** The rows of the table whose header line starts with {@code header}, as cells. */
  private static List<List<String>> table(String text, String header) {
    List<List<String>> rows = new ArrayList<>();
    boolean in = false;
    for (String line : text.lines().toList()) {
      if (line.startsWith(header)) {
        in = true;
      } else if (in && line.startsWith("|---")) {
        continue;
      } else if (in && line.startsWith("|")) {
        List<String> cells = new ArrayList<>();
        for (String cell : line.substring(1, line.length() - 1).split("(?<!\\\\)\\|")) {
          cells.add(cell.trim());
        }
        rows.add(cells);
      } else if (in) {
        break;
      }
    }
    assertThat(rows).as("rows of the table " + header).isNotEmpty();
    return rows;
  }

  private static Map<String, String> calls(String text) {
    Map<String, String> calls = new HashMap<>();
    Matcher m = CALL.matcher(text);
    while (m.find()) {
      calls.put(m.group(1), m.group(1) + "(" + m.group(2) + ")");
    }
    return calls;
  }

  private static List<String> codes(String text) {
    List<String> codes = new ArrayList<>();
    Matcher m = CODE.matcher(text);
    while (m.find()) {
      codes.add(m.group(1));
    }
    return codes;
  }

  private static long number(String text) {
    Matcher m = NUMBER.matcher(text.strip());
    assertThat(m.find()).as("a number in '" + text + "'").isTrue();
    return Long.parseLong(m.group(1));
  }

  private static Path root() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isRegularFile(dir.resolve("quarry"))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException("cannot find the repository root above " + Path.of("").toAbsolutePath());
    }
    return dir;
  }
}
