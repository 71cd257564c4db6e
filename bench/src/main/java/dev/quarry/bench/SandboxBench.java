package dev.quarry.bench;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.search.Embedder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Sandboxes: Quarry's sandbox service side by side with the naive ways to run a cell through
 * docker-java ({@link DockerBaselines}), in one run, on the same image, hardening and limits.
 */
public final class SandboxBench {
  static final String TRIVIAL = "print(1 + 1)";
  /** 999,999 characters plus the newline: 1,000,000 characters (1 MB of ASCII) of stdout. */
  static final String ONE_MB = "print('x' * 999999)";
  static final int ONE_MB_CHARS = 1_000_000;
  /**
   * Ten small self-contained cells: the naive ways keep no namespace between cells, so no cell may
   * rely on an earlier one. All ten are within CONTRACT.md's restricted language.
   */
  static final List<String> ANALYSIS = List.of(
      "print(sum(i * i for i in range(10000)))",
      "print(sorted({w: len(w) for w in 'a bb ccc dddd'.split()}.items()))",
      "import json\nprint(json.dumps({'k': list(range(20))}))",
      "import math\nprint(math.sqrt(2) * math.pi)",
      "import re\nprint(re.findall(r'\\d+', 'a1b22c333'))",
      "print(max(range(1000), key=lambda x: (x * 7919) % 1000))",
      "print([x for x in range(100) if x % 7 == 0])",
      "print(' '.join(reversed('one two three'.split())))",
      "print(len(str(2 ** 1000)))",
      "print({'answer': 42})");

  static final int RUN_TRIVIAL = 10;
  static final int RUN_ANALYSES = 2;
  static final int RUN_ONE_MB = 3;
  static final int EXEC_TRIVIAL = 30;
  static final int EXEC_ANALYSES = 5;
  static final int EXEC_ONE_MB = 10;

  private final BenchPaths paths;
  private final Embedder model;

  public SandboxBench(BenchPaths paths, Embedder model) {
    this.paths = paths;
    this.model = model;
  }

  /** One measured series per row of the table. */
  record Row(String system, String what, Percentiles p) {
    String markdown() {
      return String.format(Locale.ROOT, "| %s | %s | %d | %.1f | %.1f | %.1f |", system, what, p.count(), p.p50(),
          p.p95(), p.mean());
    }
  }

  static String header() {
    return "| system | measurement | runs | p50 ms | p95 ms | mean ms |\n|---|---|---:|---:|---:|---:|";
  }

  public String run() throws Exception {
    Map<String, String> env = System.getenv();
    SandboxSettings settings = SandboxSettings.fromEnv(env);
    SandboxLimits limits = settings.limits();
    List<Row> rows = new ArrayList<>();
    Baselines base;
    try (DockerClient docker = ContainerLauncher.connect(settings.dockerHost());
        DockerBaselines naive = new DockerBaselines(docker, settings.image(), limits)) {
      base = baselines(naive, rows);
    }

    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, """
        Image `%s`, every container with the sandbox's hardening and default limits (network none,
        read-only root, all capabilities dropped, no-new-privileges, uid 10001, %d MiB memory = memory+swap,
        %.1f CPU, %d pids, tmpfs /tmp). "docker run per cell": docker-java create + start of a container
        running `python3 -s -c CELL`, wait, read its logs, remove. "docker exec per cell": exec create +
        attached start + inspect (exit code) of `python3 -s -c CELL` in one long-lived container. A
        10-cell analysis is ten small self-contained cells (no state carried between cells, since the
        naive ways keep none), one after the other; 1 MB of output is one cell printing 1,000,000
        characters. Sequential, one at a time, after one warm-up of each kind.

        """, settings.image(), limits.memoryBytes() >> 20, limits.nanoCpus() / 1e9, limits.pidsLimit()));
    md.append(header()).append('\n');
    rows.forEach(r -> md.append(r.markdown()).append('\n'));
    md.append('\n');
    System.out.println(header());
    rows.forEach(r -> System.out.println(r.markdown()));
    return md.toString();
  }

  record Baselines(Percentiles runTrivial, Percentiles execTrivial, Percentiles execAnalysis) {}

  private static Baselines baselines(DockerBaselines naive, List<Row> rows) throws Exception {
    System.out.println("sandbox: docker run per cell");
    naive.dockerRun(TRIVIAL).requireOk();
    Percentiles runTrivial = time(RUN_TRIVIAL, () -> expect(naive.dockerRun(TRIVIAL).requireOk().stdout(), "2\n"));
    rows.add(new Row("docker run per cell", "trivial cell (create, start, wait, logs, remove)", runTrivial));
    rows.add(new Row("docker run per cell", "1 MB of output", time(RUN_ONE_MB,
        () -> expectLength(naive.dockerRun(ONE_MB).requireOk().stdout(), ONE_MB_CHARS))));
    rows.add(new Row("docker run per cell", "10-cell analysis", time(RUN_ANALYSES, () -> {
      for (String cell : ANALYSIS) {
        naive.dockerRun(cell).requireOk();
      }
    })));

    System.out.println("sandbox: docker exec per cell");
    Percentiles execTrivial;
    Percentiles execAnalysis;
    try (DockerBaselines.LongLived box = naive.startLongLived()) {
      box.exec(TRIVIAL).requireOk();
      execTrivial = time(EXEC_TRIVIAL, () -> expect(box.exec(TRIVIAL).requireOk().stdout(), "2\n"));
      rows.add(new Row("docker exec per cell", "trivial cell (exec create, start, inspect)", execTrivial));
      rows.add(new Row("docker exec per cell", "1 MB of output", time(EXEC_ONE_MB,
          () -> expectLength(box.exec(ONE_MB).requireOk().stdout(), ONE_MB_CHARS))));
      execAnalysis = time(EXEC_ANALYSES, () -> {
        for (String cell : ANALYSIS) {
          box.exec(cell).requireOk();
        }
      });
      rows.add(new Row("docker exec per cell", "10-cell analysis (container already running)", execAnalysis));
    }
    return new Baselines(runTrivial, execTrivial, execAnalysis);
  }

  interface Step {
    void run() throws Exception;
  }

  static Percentiles time(int n, Step step) throws Exception {
    double[] millis = new double[n];
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      step.run();
      millis[i] = (System.nanoTime() - start) / 1e6;
    }
    Percentiles p = Percentiles.of(millis);
    System.out.printf(Locale.ROOT, "  %d runs: p50 %.1f ms, p95 %.1f ms%n", n, p.p50(), p.p95());
    return p;
  }

  private static void expect(String actual, String expected) {
    if (!actual.equals(expected)) {
      throw new IllegalStateException("expected output " + expected.strip() + ", got " + abbreviate(actual));
    }
  }

  private static void expectLength(String actual, int length) {
    if (actual.length() != length) {
      throw new IllegalStateException("expected " + length + " characters of output, got " + actual.length());
    }
  }

  static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }
}
