package dev.quarry.bench;

import dev.quarry.ingest.HostileFixtures;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code ./quarry bench ingest-memory} (issue 33): what one file makes the gateway allocate. Every
 * hostile fixture ({@code ingest/HostileFixtures}: the red team's four and one per class of input
 * that asks a converter for more than its size) and every real shared file of 1 MB or less is
 * ingested through {@link dev.quarry.ingest.IngestService} in a JVM of its own with the pod's heap
 * ({@code -Xmx2304m}: MaxRAMPercentage 75 of 3 GiB), after warm-up ingests; the probe reports the
 * bytes every thread allocated during the ingest (garbage included) and the heap's peak growth over
 * what it held before. The target: no file of 1 MB or less grows the heap by more than 256 MB.
 *
 * <p>With {@code -Dbench.ingestmemory.baseline=<classes>} (bench.sh compiles the gateway of {@code
 * QUARRY_INGEST_MEMORY_BASELINE_REF} there), the same probes run against that code too, file by file
 * in turns, into a database of their own.
 */
public final class IngestMemoryBench {
  static final String HEAP = "-Xmx2304m";
  static final long TARGET = 256L << 20;

  private final BenchPaths paths;

  public IngestMemoryBench(BenchPaths paths) {
    this.paths = paths;
  }

  /** One probe's line. */
  record Probe(String file, long bytes, String outcome, String detail, long allocated, long peakGrowth, long millis) {
    static Probe of(JsonObject j) {
      return new Probe(j.getString("file"), j.getLong("bytes"), j.getString("outcome"), j.getString("detail"),
          j.getLong("allocated"), j.getLong("peak_growth"), j.getLong("millis"));
    }
  }

  /** The real shared files a gateway would be sent, of 1 MB or less. */
  private List<Path> realFiles() throws IOException {
    List<Path> out = new ArrayList<>();
    for (String dir : List.of("docling/docx", "docling/html", "docling/md", "docling/pdf", "docling/docling-json",
        "filings/pdfs")) {
      try (Stream<Path> s = Files.list(paths.sharedData().resolve(dir))) {
        s.filter(Files::isRegularFile).filter(IngestMemoryBench::isSource).sorted().forEach(out::add);
      }
    }
    out.removeIf(p -> p.toFile().length() > (1 << 20));
    return out;
  }

  /** Sources, not docling's reference outputs beside them. */
  private static boolean isSource(Path p) {
    String n = p.getFileName().toString();
    if (p.getParent().getFileName().toString().equals("docling-json")) {
      return n.endsWith(".json");
    }
    return !n.endsWith(".json") && !n.endsWith(".md.md") && !(n.endsWith(".md") && !p.toString().contains("/md/"));
  }

  private List<String> warmUps() {
    Path d = paths.sharedData().resolve("docling");
    return Stream.of("md/mixed.md", "html/example_08.html", "docx/tablecell.docx", "pdf/right_to_left_01.pdf",
        "pdf/2305.03393v1-pg9.json").map(s -> d.resolve(s).toString()).toList();
  }

  public String run() throws Exception {
    String baseline = System.getProperty("bench.ingestmemory.baseline");
    String baselineRef = System.getProperty("bench.ingestmemory.baseline.ref", "baseline");
    List<String> specs = new ArrayList<>(HostileFixtures.all().keySet());
    realFiles().forEach(p -> specs.add(p.toString()));
    Map<String, Probe> mine = new LinkedHashMap<>();
    Map<String, Probe> base = new LinkedHashMap<>();
    try (BenchDatabase db = BenchDatabase.fresh("ingest_memory", true);
        BenchDatabase baseDb = baseline == null ? null : BenchDatabase.fresh("ingest_memory_base", true)) {
      for (String spec : specs) {
        mine.put(spec, probe(classpath(null), db.config().pgDatabase(), spec));
        print("this", mine.get(spec));
        if (baseline != null) {
          base.put(spec, probe(classpath(baseline), baseDb.config().pgDatabase(), spec));
          print(baselineRef, base.get(spec));
        }
      }
    }
    return report(specs, mine, base, baseline == null ? null : baselineRef);
  }

  private static void print(String side, Probe p) {
    System.out.printf(Locale.ROOT, "  %-8s %-34s %9d B  allocated %8.1f MB  heap +%7.1f MB  %7d ms  %s %s%n", side,
        p.file(), p.bytes(), p.allocated() / 1e6, p.peakGrowth() / 1e6, p.millis(), p.outcome(), p.detail());
  }

  /** This checkout's classpath, or the same with the gateway's classes replaced by {@code gatewayClasses}. */
  private String classpath(String gatewayClasses) {
    String tests = paths.repoRoot().resolve("gateway/target/test-classes").toString();
    List<String> entries = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (gatewayClasses != null && e.replace('\\', '/').endsWith("gateway/target/classes")) {
        entries.add(gatewayClasses);
      } else {
        entries.add(e);
      }
    }
    entries.add(tests);
    return String.join(File.pathSeparator, entries);
  }

  private Probe probe(String classpath, String database, String spec) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        HEAP, "-XX:+UseSerialGC", "-Xmn24m", "--enable-native-access=ALL-UNNAMED",
        "-Dbench.ingestmemory.timeout=" + Long.getLong("bench.ingestmemory.timeout", 600),
        "-cp", classpath, IngestMemoryProbe.class.getName(), database, spec));
    cmd.addAll(warmUps());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    JsonObject line = null;
    StringBuilder tail = new StringBuilder();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String l = r.readLine(); l != null; l = r.readLine()) {
        if (l.startsWith("PROBE ")) {
          line = new JsonObject(l.substring(6));
        } else {
          tail.append(l).append('\n');
          if (tail.length() > 4000) {
            tail.delete(0, tail.length() - 4000);
          }
        }
      }
    }
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
    if (line == null) {
      String last = tail.toString().strip();
      String why = last.contains("OutOfMemoryError") ? "OutOfMemoryError outside the ingest"
          : "the probe died (exit " + p.exitValue() + ")";
      return new Probe(spec.contains("/") ? Path.of(spec).getFileName().toString() : spec,
          spec.contains("/") ? Files.size(Path.of(spec)) : HostileFixtures.all().get(spec).bytes().length,
          why, last.lines().reduce((a, b) -> b).orElse(""), -1, -1, -1);
    }
    return Probe.of(line);
  }

  private static String mb(long bytes) {
    return bytes < 0 ? "?" : String.format(Locale.ROOT, "%,.1f", bytes / 1e6);
  }

  private static String outcome(Probe p) {
    String o = p.outcome();
    return o.startsWith("too_large") || o.startsWith("malformed") ? "refused: " + o : o;
  }

  private String report(List<String> specs, Map<String, Probe> mine, Map<String, Probe> base, String baselineRef) {
    Map<String, HostileFixtures.Fixture> fixtures = HostileFixtures.all();
    StringBuilder sb = new StringBuilder();
    sb.append("""
        Every hostile fixture of `ingest/HostileFixtures` and every real shared file of 1 MB or less, each
        ingested through `IngestService` (sniffing, conversion, section tree, chunks, the in-process model,
        PostgreSQL) in a JVM of its own with the pod's heap (`-Xmx2304m`, serial collector, 24 MB young
        generation), after warm-up ingests of five small files. **allocated**: bytes every thread allocated
        during the ingest, garbage included. **heap growth**: the peak of the heap's pools during the ingest
        (reset before it) over what the heap held before it, after a full collection; at most 24 MB of it is
        young garbage, so it is what the ingest held. Target: no file of 1 MB or less grows the heap by more
        than 256 MB.

        """);
    String header = baselineRef == null
        ? "| file | what it is | bytes | outcome | allocated MB | heap growth MB | ms |\n|---|---|---:|---|---:|---:|---:|\n"
        : "| file | what it is | bytes | outcome | allocated MB | heap growth MB | ms | " + baselineRef
            + ": outcome | allocated MB | heap growth MB | ms |\n|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|\n";
    sb.append(header);
    long worst = 0;
    String worstFile = "";
    long worstBase = 0;
    for (String spec : specs) {
      Probe p = mine.get(spec);
      HostileFixtures.Fixture f = fixtures.get(spec);
      String what = f != null ? f.hostility() : "real: " + Path.of(spec).getParent().getFileName();
      sb.append(String.format(Locale.ROOT, "| %s | %s | %,d | %s | %s | %s | %,d |", p.file(), what, p.bytes(),
          outcome(p), mb(p.allocated()), mb(p.peakGrowth()), p.millis()));
      if (baselineRef != null) {
        Probe b = base.get(spec);
        sb.append(String.format(Locale.ROOT, " %s | %s | %s | %,d |", outcome(b), mb(b.allocated()), mb(b.peakGrowth()),
            b.millis()));
        worstBase = Math.max(worstBase, b.peakGrowth() < 0 ? Long.MAX_VALUE : b.peakGrowth());
      }
      sb.append('\n');
      long growth = p.peakGrowth() < 0 ? Long.MAX_VALUE : p.peakGrowth();
      if (growth >= worst) {
        worst = growth;
        worstFile = p.file();
      }
    }
    sb.append("\n### Target\n\n");
    sb.append(String.format(Locale.ROOT, "- heap growth of any file of 1 MB or less <= 256 MB: largest %s MB (%s): %s%n",
        worst == Long.MAX_VALUE ? "unknown" : mb(worst), worstFile, worst <= TARGET ? "MET" : "NOT MET"));
    if (baselineRef != null) {
      sb.append(String.format(Locale.ROOT, "- the same on %s: largest %s MB%n", baselineRef,
          worstBase == Long.MAX_VALUE ? "unknown (a probe died)" : mb(worstBase)));
    }
    return sb.toString();
  }
}
