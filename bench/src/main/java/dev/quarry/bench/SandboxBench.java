package dev.quarry.bench;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.search.Embedder;
import dev.quarry.sandbox.Callbacks;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.sandbox.CellOutcome;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.sandbox.SandboxSession;
import dev.quarry.sandbox.Scope;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

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
   * rely on an earlier one. All ten are within docs/CONTRACT.md's restricted language.
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

  static final String ECHO_CELL = "print(await llm('x'))";
  static final String LIST_CELL = "docs = await list_documents()\nprint(len(docs))";

  static final int RUN_TRIVIAL = 10;
  static final int RUN_ANALYSES = 2;
  static final int RUN_ONE_MB = 3;
  static final int EXEC_TRIVIAL = 30;
  static final int EXEC_ANALYSES = 5;
  static final int EXEC_ONE_MB = 10;
  static final int COLD_STARTS = 10;
  static final int WARM_ACQUIRES = 20;
  static final int TRIVIAL_CELLS = 200;
  static final int SEARCH_CELLS = 100;
  static final int ONE_MB_CELLS = 20;
  static final int QUARRY_ANALYSES = 10;
  static final int POOL = 2;

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
    String loadBefore = loadAverage();
    Map<String, String> env = System.getenv();
    SandboxSettings settings = SandboxSettings.fromEnv(env);
    SandboxLimits limits = settings.limits();
    List<Row> rows = new ArrayList<>();
    Baselines base;
    try (DockerClient docker = ContainerLauncher.connect(settings.dockerHost());
        DockerBaselines naive = new DockerBaselines(docker, settings.image(), limits)) {
      base = baselines(naive, rows);
    }
    Quarry quarry;
    // A runner image to measure this one against in the same run (bench.sh builds it from the
    // commit named by QUARRY_SANDBOX_BASELINE_REF), e.g. the runner before a change.
    String baselineImage = env.getOrDefault("QUARRY_SANDBOX_BASELINE_IMAGE", "");
    try (QuarrySandboxes q = new QuarrySandboxes(paths, model)) {
      quarry = quarry(q, settings, rows);
      if (!baselineImage.isBlank()) {
        againstBaseline(q, settings, baselineImage, rows);
      }
    }
    List<String> verdicts = List.of(
        verdict("warm-pool acquire p50 <= 5 ms", quarry.warm().p50(), 5),
        verdict("trivial cell round trip p50 <= 3 ms", quarry.trivial().p50(), 3),
        verdict("search callback overhead p50 <= 2 ms (per round: search cell - trivial cell - direct search)",
            quarry.callbackOverhead().p50(), 2),
        verdict("cold start (create -> Ready) p50 <= 400 ms", quarry.cold().p50(), 400),
        String.format(Locale.ROOT, "10-cell analysis >= 20x faster than docker exec per cell (p50, warm open + 10"
            + " cells against 10 execs into a running container; neither counts removing its container): %.1fx: %s",
            base.execAnalysis().p50() / quarry.analysis().p50(),
            base.execAnalysis().p50() / quarry.analysis().p50() >= 20 ? "MET" : "NOT MET"));

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
    md.append(String.format(Locale.ROOT, "Load average (1, 5, 15 min) before: %s; after: %s (this machine's two"
        + " cores are shared with other work; figures move with it).%n%n", loadBefore, loadAverage()));
    md.append(header()).append('\n');
    rows.forEach(r -> md.append(r.markdown()).append('\n'));
    md.append('\n').append(String.format(Locale.ROOT, """
        Quarry: `SandboxService` in process, over a bench database with 20 small ingested documents, warm
        pool of %d per tenant. Cold start: `open` on a service without a pool (create, start, the runner's
        Ready over its socket). Warm acquire: `open` when the pool is full (`warm` awaited first, not
        timed). Trivial cell: `print(1 + 1)` round trip in one session. Search callback overhead: in
        each of %d rounds, a trivial cell, the same search made directly on SearchService in process,
        and a cell `await search(q, 5)`, back to back; overhead = search cell - trivial cell - direct
        search, per round: what the hop sandbox -> gateway -> sandbox adds, the gateway's JSON of
        the hits included. The next row subtracts the time measured around the gateway's callback
        instead of the direct search. 1 MB of output with `max_output_chars` 1,000,000 (nothing truncated).
        10-cell analysis: `open` (warm) + the same ten cells, and the same + `close` (which returns once
        the container is removed); the target compares the former with the exec baseline, whose
        container is already running and is not removed either.

        """, POOL, SEARCH_CELLS));
    if (!baselineImage.isBlank()) {
      md.append(String.format(Locale.ROOT, """
          Against a baseline runner: this image and `%s` (QUARRY_SANDBOX_BASELINE_IMAGE, or the runner of
          QUARRY_SANDBOX_BASELINE_REF built by bench.sh), each on a service without a pool, a cold start
          of one then of the other, %d times; then one session on each and a trivial cell on one then
          on the other, %d times, after 20 warm-up cells each: both see the same moments of load.

          """, baselineImage, COLD_STARTS, TRIVIAL_CELLS));
    }
    md.append("### Targets\n\n");
    verdicts.forEach(v -> md.append("- ").append(v).append('\n'));
    System.out.println(header());
    rows.forEach(r -> System.out.println(r.markdown()));
    verdicts.forEach(System.out::println);
    return md.toString();
  }

  /**
   * Cold start and trivial cell of this image against a baseline image, alternating one of each so
   * that both see the same load on this shared machine.
   */
  private static void againstBaseline(QuarrySandboxes q, SandboxSettings current, String baselineImage,
      List<Row> rows) throws Exception {
    System.out.println("sandbox: this runner against " + baselineImage);
    UUID tenant = q.tenant();
    Callbacks callbacks = q.callbacks();
    SandboxService now = q.service(current, q.runRoot(), 0);
    SandboxService before = q.service(current, baselineImage, q.runRoot(), 0);
    try {
      double[][] cold = new double[2][COLD_STARTS];
      SandboxService[] services = {now, before};
      for (SandboxService s : services) {
        s.open(tenant, Scope.ALL, callbacks).compose(SandboxSession::close).await();
      }
      for (int i = 0; i < COLD_STARTS; i++) {
        for (int k = 0; k < 2; k++) {
          long start = System.nanoTime();
          SandboxSession s = services[k].open(tenant, Scope.ALL, callbacks).await();
          cold[k][i] = (System.nanoTime() - start) / 1e6;
          s.close().await();
        }
      }
      double[][] trivial = new double[2][TRIVIAL_CELLS];
      SandboxSession[] sessions = {now.open(tenant, Scope.ALL, callbacks).await(),
          before.open(tenant, Scope.ALL, callbacks).await()};
      try {
        CellOptions defaults = CellOptions.defaults(now.settings());
        for (int i = 0; i < 20; i++) {
          for (SandboxSession s : sessions) {
            QuarrySandboxes.run(s, TRIVIAL, defaults);
          }
        }
        for (int i = 0; i < TRIVIAL_CELLS; i++) {
          for (int k = 0; k < 2; k++) {
            long start = System.nanoTime();
            expect(QuarrySandboxes.run(sessions[k], TRIVIAL, defaults).stdout(), "2\n");
            trivial[k][i] = (System.nanoTime() - start) / 1e6;
          }
        }
      } finally {
        for (SandboxSession s : sessions) {
          s.close().await();
        }
      }
      String[] who = {"this runner (" + current.image() + ")", "baseline runner (" + baselineImage + ")"};
      for (int k = 0; k < 2; k++) {
        rows.add(new Row(who[k], "cold start, alternating with the other image", Percentiles.of(cold[k])));
      }
      for (int k = 0; k < 2; k++) {
        rows.add(new Row(who[k], "trivial cell round trip, alternating with the other image",
            Percentiles.of(trivial[k])));
      }
    } finally {
      now.close().await();
      before.close().await();
    }
  }

  private static String loadAverage() {
    try {
      String[] f = java.nio.file.Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (java.io.IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static String verdict(String target, double value, double limit) {
    return String.format(Locale.ROOT, "%s: %.2f ms: %s", target, value, value <= limit ? "MET" : "NOT MET");
  }

  record Quarry(Percentiles cold, Percentiles warm, Percentiles trivial, Percentiles callbackOverhead,
      Percentiles analysis) {}

  private static Quarry quarry(QuarrySandboxes q, SandboxSettings base, List<Row> rows) throws Exception {
    String system = "Quarry";
    Path runRoot = q.runRoot();
    UUID tenant = q.tenant();
    Callbacks callbacks = q.callbacks();

    System.out.println("sandbox: Quarry cold start");
    Percentiles cold;
    SandboxService coldService = q.service(base, runRoot, 0);
    try {
      coldService.open(tenant, Scope.ALL, callbacks).compose(SandboxSession::close).await();
      cold = time(COLD_STARTS, () -> {
        long start = System.nanoTime();
        SandboxSession s = coldService.open(tenant, Scope.ALL, callbacks).await();
        double ms = (System.nanoTime() - start) / 1e6;
        s.close().await();
        return ms;
      });
    } finally {
      coldService.close().await();
    }
    rows.add(new Row(system, "cold start: open without a pool (create, start, runner Ready)", cold));

    SandboxService service = q.service(base, runRoot, POOL);
    try {
      System.out.println("sandbox: Quarry warm acquire");
      service.warm(tenant).await();
      service.open(tenant, Scope.ALL, callbacks).compose(SandboxSession::close).await();
      Percentiles warm = time(WARM_ACQUIRES, () -> {
        service.warm(tenant).await();
        long start = System.nanoTime();
        SandboxSession s = service.open(tenant, Scope.ALL, callbacks).await();
        double ms = (System.nanoTime() - start) / 1e6;
        s.close().await();
        return ms;
      });
      rows.add(new Row(system, "warm-pool acquire: open with the pool full", warm));

      service.warm(tenant).await();
      SandboxSession session = service.open(tenant, Scope.ALL, callbacks).await();
      Percentiles trivial;
      Percentiles overhead;
      try {
        CellOptions defaults = CellOptions.defaults(service.settings());
        System.out.println("sandbox: Quarry cells");
        for (int i = 0; i < 20; i++) {
          QuarrySandboxes.run(session, TRIVIAL, defaults);
          QuarrySandboxes.run(session, QuarrySandboxes.SEARCH_CELL, defaults);
        }
        trivial = time(TRIVIAL_CELLS, () -> expect(QuarrySandboxes.run(session, TRIVIAL, defaults).stdout(), "2\n"));
        rows.add(new Row(system, "trivial cell round trip", trivial));

        // Paired: each round times a trivial cell, a direct search and a search cell back to back,
        // so all three see the same load on this shared machine; the overhead is taken per round.
        double[] direct = new double[SEARCH_CELLS];
        double[] cell = new double[SEARCH_CELLS];
        double[] plain = new double[SEARCH_CELLS];
        double[] paired = new double[SEARCH_CELLS];
        double[] inside = new double[SEARCH_CELLS];
        for (int i = 0; i < SEARCH_CELLS; i++) {
          long start = System.nanoTime();
          expect(QuarrySandboxes.run(session, TRIVIAL, defaults).stdout(), "2\n");
          plain[i] = (System.nanoTime() - start) / 1e6;
          direct[i] = q.directSearch();
          start = System.nanoTime();
          expect(QuarrySandboxes.run(session, QuarrySandboxes.SEARCH_CELL, defaults).stdout(), "5\n");
          cell[i] = (System.nanoTime() - start) / 1e6;
          paired[i] = cell[i] - plain[i] - direct[i];
          inside[i] = cell[i] - plain[i] - q.lastSearchNanos() / 1e6;
        }
        rows.add(new Row("SearchService", "direct search (same query, in process), for scale", Percentiles.of(direct)));
        rows.add(new Row(system, "cell with one search callback", Percentiles.of(cell)));
        // Judged on this one: it charges the hop with everything the callback does beyond
        // SearchService.search, the JSON of the hits included.
        overhead = Percentiles.of(paired);
        rows.add(new Row(system, "search callback overhead: search cell - trivial cell - direct search, per round",
            overhead));
        rows.add(new Row(system, "same, subtracting the callback's own gateway time instead of the direct search",
            Percentiles.of(inside)));

        rows.add(new Row(system, "cell with one callback answered at once (llm stand-in: the bare round trip)",
            time(SEARCH_CELLS, () -> expect(QuarrySandboxes.run(session, ECHO_CELL, defaults).stdout(), "ok\n"))));
        rows.add(new Row(system, "cell with one list_documents callback (20 short entries)", time(SEARCH_CELLS,
            () -> expect(QuarrySandboxes.run(session, LIST_CELL, defaults).stdout(), "20\n"))));

        CellOptions big = new CellOptions(defaults.wallTimeMs(), ONE_MB_CHARS, List.of());
        rows.add(new Row(system, "1 MB of output", time(ONE_MB_CELLS, () -> {
          CellOutcome o = QuarrySandboxes.run(session, ONE_MB, big);
          expectLength(o.stdout(), ONE_MB_CHARS);
          if (o.truncated()) {
            throw new IllegalStateException("1 MB of output came back truncated");
          }
        })));
      } finally {
        session.close().await();
      }

      System.out.println("sandbox: Quarry 10-cell analyses");
      CellOptions defaults = CellOptions.defaults(service.settings());
      double[] cellsOnly = new double[QUARRY_ANALYSES];
      double[] withClose = new double[QUARRY_ANALYSES];
      for (int i = 0; i < QUARRY_ANALYSES; i++) {
        service.warm(tenant).await();
        long start = System.nanoTime();
        SandboxSession s = service.open(tenant, Scope.ALL, callbacks).await();
        try {
          for (String cell : ANALYSIS) {
            QuarrySandboxes.run(s, cell, defaults);
          }
          cellsOnly[i] = (System.nanoTime() - start) / 1e6;
        } finally {
          s.close().await();
        }
        withClose[i] = (System.nanoTime() - start) / 1e6;
      }
      Percentiles analysis = Percentiles.of(cellsOnly);
      rows.add(new Row(system, "10-cell analysis: open (warm) + 10 cells", analysis));
      rows.add(new Row(system, "10-cell analysis: open (warm) + 10 cells + close (container removed)",
          Percentiles.of(withClose)));
      return new Quarry(cold, warm, trivial, overhead, analysis);
    } finally {
      service.close().await();
    }
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

  /** A step that measures itself (leaving out its own set-up and tear-down); milliseconds. */
  interface Measured {
    double run() throws Exception;
  }

  static Percentiles time(int n, Step step) throws Exception {
    return time(n, () -> {
      long start = System.nanoTime();
      step.run();
      return (System.nanoTime() - start) / 1e6;
    });
  }

  static Percentiles time(int n, Measured step) throws Exception {
    double[] millis = new double[n];
    for (int i = 0; i < n; i++) {
      millis[i] = step.run();
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
