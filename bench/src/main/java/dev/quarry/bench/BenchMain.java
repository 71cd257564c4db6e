package dev.quarry.bench;

import dev.quarry.search.OnnxEmbedder;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code BenchMain [retrieval|long-queries|filings|conversion|models|latency|ingest|ingest-memory|sandbox|tenants|analyses|soak|cluster|cluster-events|cluster-takeover|embeddings|all]...}: runs the named benchmarks, prints
 * their figures and writes each one's section of BENCHMARKS.md at the repository root.
 * {@code embeddings} only fills the vector cache (the slow, one-off part of a first run). {@code soak}
 * (about five and a half minutes, {@code QUARRY_SOAK_SECONDS}) is not part of {@code all}: it restarts
 * a PostgreSQL cluster of its own and kills containers, so it runs only when named.
 */
public final class BenchMain {
  private static final List<String> ALL = List.of("retrieval", "long-queries", "conversion", "models", "latency", "ingest", "ingest-memory", "documents", "sandbox", "tenants", "analyses", "surfaces");

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    Set<String> which = new LinkedHashSet<>();
    for (String a : args.length == 0 ? new String[] {"all"} : args) {
      switch (a.toLowerCase(Locale.ROOT)) {
        case "all" -> {
          which.addAll(ALL);
          which.add("conversion-filings");
        }
        // One command for conversion (issue 17): the docling pairs, then the filings' PDFs.
        case "conversion" -> {
          which.add("conversion");
          which.add("conversion-filings");
        }
        // One command for the cluster (issue 34): quotas and throughput, then events across replicas,
        // then analyses taken over from a lost replica (issue 35).
        case "cluster" -> {
          which.add("cluster");
          which.add("cluster-events");
          which.add("cluster-takeover");
        }
        case "retrieval", "long-queries", "filings", "conversion-filings", "models", "latency", "ingest", "ingest-memory", "documents", "sandbox", "tenants", "analyses", "surfaces", "soak", "cluster-events", "cluster-takeover", "embeddings" -> which.add(a.toLowerCase(Locale.ROOT));
        default -> {
          System.err.println("unknown benchmark '" + a + "'; expected one or more of: retrieval, long-queries, filings, conversion, conversion-filings, models, latency, ingest, ingest-memory, sandbox, tenants, analyses, surfaces, soak, cluster,"
              + " cluster-events, cluster-takeover, embeddings, all");
          System.exit(2);
        }
      }
    }
    String command = System.getProperty("bench.command",
        "java -cp <bench classes + bench/target/classpath.txt> dev.quarry.bench.BenchMain " + String.join(" ", args));
    BenchPaths paths = BenchPaths.detect();
    // The model the gateway would use (QUARRY_EMBEDDING_MODEL), so a bench run can compare models.
    OnnxEmbedder model = new OnnxEmbedder(
        System.getenv().getOrDefault("QUARRY_EMBEDDING_MODEL", OnnxEmbedder.DEFAULT));
    List<String> failed = new ArrayList<>();
    for (String bench : which) {
      long start = System.nanoTime();
      try {
        String title;
        String body;
        switch (bench) {
          case "retrieval" -> { title = "Retrieval quality"; body = new RetrievalBench(paths, model).run(); }
          case "long-queries" -> { title = "Long queries"; body = new LongQueryBench(paths, model).run(); }
          case "filings" -> { title = "Filings: finding the evidence page"; body = new FilingsBench(paths).run(); }
          case "conversion" -> { title = "Conversion against docling's reference"; body = new ConversionBench(paths).run(); }
          case "conversion-filings" -> { title = "Conversion: the filings' PDFs"; body = new FilingsConversionBench(paths).run(); }
          case "models" -> { title = "Embedding model choice"; body = new ModelBench(paths).run(); }
          case "latency" -> { title = "Search latency"; body = new LatencyBench(paths, model).run(); }
          case "ingest" -> { title = "Ingestion throughput"; body = new IngestBench(paths, model).run(); }
          case "ingest-memory" -> { title = "Ingest memory"; body = new IngestMemoryBench(paths).run(); }
          case "documents" -> { title = "The /documents tree of a large tenant"; body = new DocumentsFsBench().run(); }
          case "sandbox" -> { title = "Sandboxes"; body = new SandboxBench(paths, model).run(); }
          case "tenants" -> { title = "Tenant isolation under load"; body = new NoisyNeighbourBench().run(); }
          case "analyses" -> { title = "Analyses: gateway overhead and concurrency"; body = new AnalysesBench().run(); }
          case "surfaces" -> { title = "The OpenAI-compatible and MCP surfaces against REST"; body = new SurfacesBench().run(); }
          case "soak" -> { title = "Soak under faults"; body = new SoakBench().run(); }
          case "cluster" -> { title = "Replicas: quotas across a cluster, and its throughput"; body = new ClusterBench().run(); }
          case "cluster-events" -> { title = "Replicas: an analysis' events followed through another replica"; body = new ClusterEventsBench().run(); }
          case "cluster-takeover" -> { title = "Replicas: analyses taken over from a lost replica, and follow-ups"; body = new ClusterTakeoverBench().run(); }
          default -> {
            for (TestCollection c : List.of(TestCollections.cranfield(paths.retrieval()),
                TestCollections.msmarco(paths.retrieval()), TestCollections.vaswani(paths.retrieval()))) {
              VectorCache.Vectors v = VectorCache.load(paths.work().resolve("embeddings"), c, model);
              System.out.printf(Locale.ROOT, "%s: %d vectors (%s)%n", c.name(), v.docs().size(),
                  v.fromCache() ? "cached" : String.format(Locale.ROOT, "embedded in %.0fs", v.embedSeconds()));
            }
            continue;
          }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        String section = Machine.describe().markdown(command)
            + String.format(Locale.ROOT, "- wall time of this benchmark: %.0f s%n%n", seconds) + body;
        BenchmarksFile.replaceSection(paths.benchmarksFile(), title, section);
        System.out.println("\n## " + title + "\n\n" + section);
      } catch (Exception e) {
        // One benchmark failing (say, a service still a skeleton) must not cost the others' figures.
        System.err.println(bench + " failed: " + e);
        e.printStackTrace();
        failed.add(bench);
      }
    }
    if (!failed.isEmpty()) {
      System.err.println("failed: " + String.join(", ", failed));
      System.exit(1);
    }
    System.exit(0);
  }
}
