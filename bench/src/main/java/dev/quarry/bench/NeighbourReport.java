package dev.quarry.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The noisy-neighbour benchmark's section of BENCHMARKS.md: what it measures, how, the figures and the targets. */
final class NeighbourReport {
  static final double P50_TARGET = 3;
  static final double P95_TARGET = 5;

  private NeighbourReport() {}

  static String markdown(List<NoisyNeighbourBench.Case> cases, double setupSeconds, double seconds, long bigItems,
      String load) {
    QuietTenant.Phase alone = new QuietTenant.Phase();
    for (NoisyNeighbourBench.Case c : cases) {
      alone.addAll(c.alone());
    }
    // The alone phases' median: one just after an attack may still hold some of what it left.
    long aloneOldGen = median(cases.stream().mapToLong(c -> c.aloneHeap().oldGenAfterGcBytes()).toArray());
    long alonePeak = median(cases.stream().mapToLong(c -> c.aloneHeap().peakBytes()).toArray());
    long aloneRss = median(cases.stream().mapToLong(c -> c.aloneHeap().peakRssBytes()).toArray());
    long phase = NoisyNeighbourBench.PHASE.toSeconds();
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, """
        One tenant does its worst while a quiet tenant works (issue 33; issue 14's callback flood and held \
        sandboxes are among the cases). The gateway is this checkout's build (`gateway/target/classes`), run as a \
        process of its own (`dev.quarry.cli.Main serve`) with the pod's heap (`-Xmx%s`: \
        `-XX:MaxRAMPercentage=75` of the pod's 3 GiB) and the settings of `k8s/base/configmap.yaml` (16 database \
        connections, 16 sandboxes, 2 warm per tenant, 10 s wait for one), its data directory and its sandboxes' run \
        directory each a tmpfs of their own, the run directory %d MiB as the pod's `sizeLimit`; everything over \
        HTTP on 127.0.0.1. Sandboxes run the real runner (`QUARRY_SANDBOX_IMAGE`): the noisy tenant's code is code \
        any tenant could send. `llm()` goes to a stand-in model in the bench process.

        The quiet tenant (13 small documents) repeatedly searches (`POST /v1/search`, every 250 ms), ingests a \
        1.5 KB Markdown file (`POST /v1/documents`, multipart, every 1.5 s) and runs a cell scoped to one of its \
        documents (`POST /v1/executions`: one `search` callback and a read of its `/documents` file, every 1.5 s), \
        each loop waiting for its last request. A request that fails, or takes over %d s, counts as failed (and \
        with its time in the percentiles). For each case the quiet tenant works %d s alone, then the attack starts \
        and, once it is in force, %d s under it; the attack is checked from the outside at the end of that phase, \
        and stopped. *alone* pools every alone phase; each case's ratios are against it. The heap: its peak in use \
        sampled from `/metrics` every 0.5 s during the phase, and the old generation (`jvm_memory_used_bytes`, \
        `G1 Old Gen`) right after a full GC (`jcmd GC.run`) at the phase's end, the attack still in force: what it \
        holds live (for *alone*, the median of the alone phases). And the process' peak resident set (`VmRSS`: the heap, direct buffers and the rest), which the \
        pod's 3 GiB memory limit is checked against.

        """, NoisyNeighbourBench.HEAP, NoisyNeighbourBench.RUN_DIR_BYTES >> 20, QuietTenant.TIMEOUT.toSeconds(),
        phase, phase));
    md.append("The noisy tenant (the same 12 small documents, a document whose `items.jsonl` is ")
        .append(String.format(Locale.ROOT, "%.1f MB", bigItems / 1e6))
        .append(", and 18 documents of 640 to 1,280,000 characters to scope sandboxes to), one case at a time:\n\n");
    for (NoisyNeighbourBench.Case c : cases) {
      md.append("- **").append(c.attack().name()).append("**: ").append(c.attack().how()).append('\n');
    }
    md.append("\n| case | search p50 ms | search p95 ms | ingest p50 ms | ingest p95 ms | cell p50 ms | cell p95 ms"
        + " | quiet failed | heap peak MiB | old gen after GC MiB | RSS peak MiB | targets |\n"
        + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    md.append("| alone (").append(cases.size()).append(" phases) |");
    for (String op : QuietTenant.OPS) {
      Percentiles p = percentiles(alone, op);
      md.append(String.format(Locale.ROOT, " %s | %s |", ms(p == null ? Double.NaN : p.p50()),
          ms(p == null ? Double.NaN : p.p95())));
    }
    md.append(String.format(Locale.ROOT, " %d of %d | %d | %d | %d | |%n", alone.failed(), alone.requests(),
        alonePeak >> 20, aloneOldGen >> 20, aloneRss >> 20));
    int met = 0;
    List<String> failures = new ArrayList<>();
    for (NoisyNeighbourBench.Case c : cases) {
      md.append("| ").append(c.attack().name()).append(" |");
      List<String> missed = new ArrayList<>();
      for (String op : QuietTenant.OPS) {
        Percentiles a = percentiles(alone, op);
        Percentiles n = percentiles(c.attacked(), op);
        if (a == null || n == null) {
          md.append(" – | – |");
          missed.add(op + ": no samples");
          continue;
        }
        double r50 = n.p50() / a.p50();
        double r95 = n.p95() / a.p95();
        md.append(String.format(Locale.ROOT, " %s (×%.1f) | %s (×%.1f) |", ms(n.p50()), r50, ms(n.p95()), r95));
        if (r50 > P50_TARGET) {
          missed.add(String.format(Locale.ROOT, "%s p50 ×%.1f", op, r50));
        }
        if (r95 > P95_TARGET) {
          missed.add(String.format(Locale.ROOT, "%s p95 ×%.1f", op, r95));
        }
      }
      if (c.attacked().failed() > 0) {
        missed.add(c.attacked().failed() + " failed");
      }
      met += missed.isEmpty() ? 1 : 0;
      md.append(String.format(Locale.ROOT, " %d of %d | %s | %s | %s | %s |%n", c.attacked().failed(),
          c.attacked().requests(), mib(c.attackedHeap().peakBytes()), mib(c.attackedHeap().oldGenAfterGcBytes()),
          mib(c.attackedHeap().peakRssBytes()) + podShare(c.attackedHeap().peakRssBytes()),
          missed.isEmpty() ? "met" : "**NOT met**: " + String.join(", ", missed)));
      for (String op : QuietTenant.OPS) {
        List<String> f = c.attacked().failures(op);
        if (!f.isEmpty()) {
          failures.add(String.format(Locale.ROOT, "%s: %d × %s; first: %s", c.attack().name(), f.size(), op, f.get(0)));
        }
      }
    }
    md.append(String.format(Locale.ROOT, "%nTargets (issue 33): the quiet tenant's search, ingest and cell p50 within"
        + " %.0f× alone and p95 within %.0f×, and none of its requests failed, in every case: **%s** (%d of %d cases"
        + " met).%n", P50_TARGET, P95_TARGET, met == cases.size() ? "met" : "NOT met", met, cases.size()));
    for (NoisyNeighbourBench.Case c : cases) {
      if (c.attack() instanceof RequestAttacks.QuotaFlood) {
        Percentiles a = percentiles(c.alone(), "search");
        Percentiles n = percentiles(c.attacked(), "search");
        if (a != null && n != null) {
          md.append(String.format(Locale.ROOT, "Issue 14's target for the tenant past its quota (search p50 within"
              + " 20%% of the phase just before): ×%.2f, %s.%n", n.p50() / a.p50(), n.p50() <= 1.2 * a.p50() ? "met"
              : "NOT met"));
        }
      }
    }
    md.append("\nWhat each attack was doing at the end of its phase, checked from the outside:\n\n");
    for (NoisyNeighbourBench.Case c : cases) {
      md.append("- ").append(c.attack().name()).append(": ").append(c.check());
      if (!c.note().isEmpty()) {
        md.append(" (").append(c.note()).append(')');
      }
      md.append('\n');
    }
    if (!failures.isEmpty()) {
      md.append("\nThe quiet tenant's failures:\n\n");
      failures.forEach(f -> md.append("- ").append(f).append('\n'));
    }
    if (alone.failed() > 0) {
      md.append("\nAlone, the quiet tenant had ").append(alone.failed()).append(" failures: ");
      for (String op : QuietTenant.OPS) {
        if (!alone.failures(op).isEmpty()) {
          md.append(alone.failures(op).get(0)).append("; ");
        }
      }
      md.append('\n');
    }
    md.append(String.format(Locale.ROOT, "%n- set-up (tenants, documents, warm-up): %.0f s; the whole benchmark %.0f s"
        + "%n- load average (1, 5, 15 min) at the end: %s. The machine is shared (2 cores): absolute figures move with"
        + " its load, which is why alone and attacked phases alternate%n", setupSeconds, seconds, load));
    return md.toString();
  }

  private static Percentiles percentiles(QuietTenant.Phase phase, String op) {
    double[] ms = phase.millis(op);
    return ms.length == 0 ? null : Percentiles.of(ms);
  }

  /** What share of the pod's 3 GiB memory limit (past which it is killed) a resident set is, from 80% on. */
  private static String podShare(long rss) {
    double share = rss / (double) (3L << 30);
    return share < 0.8 ? "" : String.format(Locale.ROOT, " (%.0f%% of the pod's 3 GiB)", share * 100);
  }

  private static long median(long[] values) {
    if (values.length == 0) {
      return -1;
    }
    long[] sorted = values.clone();
    java.util.Arrays.sort(sorted);
    return sorted[(sorted.length - 1) / 2];
  }

  private static String ms(double v) {
    return Double.isNaN(v) ? "–" : v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
  }

  private static String mib(long bytes) {
    return bytes < 0 ? "–" : Long.toString(bytes >> 20);
  }
}
