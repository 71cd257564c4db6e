package dev.quarry.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.search.OnnxEmbedder;
import dev.quarry.search.SearchMode;
import dev.quarry.tenancy.Tenants;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The regression gate of retrieval quality: Quarry's hybrid ranking of Cranfield, through the same
 * SearchService the gateway runs and the vectors the bench embeds (cached under
 * bench/target/bench-work/embeddings; the first run on a machine embeds the collection once), must
 * stay within {@link #TOLERANCE} of the figure recorded in BENCHMARKS.md, and not fall below
 * either of its halves. A change to fusion, BM25 or the indexed text that moves the figure has to
 * rerun {@code ./quarry bench retrieval}, which records the new one.
 */
@DisplayName("Retrieval gate: Cranfield nDCG@10 as recorded in BENCHMARKS.md")
class RetrievalGateTest {
  static final double TOLERANCE = 0.01;

  private static final Pattern HYBRID_ROW = Pattern.compile("^\\| Quarry hybrid [^|]*\\| ([0-9.]+) \\|", Pattern.MULTILINE);

  private static Map<SearchMode, Double> measured;
  private static double recorded;

  @BeforeAll
  static void rank() throws Exception {
    BenchPaths paths = BenchPaths.detect();
    recorded = recordedHybrid(Files.readString(paths.benchmarksFile()));
    TestCollection c = TestCollections.cranfield(paths.retrieval());
    OnnxEmbedder model = new OnnxEmbedder();
    VectorCache.Vectors vectors = VectorCache.load(paths.work().resolve("embeddings"), c, model);
    List<Integer> judged = new ArrayList<>();
    for (int i = 0; i < c.queries().size(); i++) {
      if (c.qrels().getOrDefault(c.queries().get(i).id(), Map.of()).values().stream().anyMatch(g -> g > 0)) {
        judged.add(i);
      }
    }
    CachedQueryEmbedder embedder = new CachedQueryEmbedder(model);
    embedder.remember(c.queries().stream().map(TestCollection.Query::text).toList(), vectors.queries());
    // A name of its own: other checkouts may run this test on the same PostgreSQL at the same time.
    String purpose = "gate_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    try (BenchDatabase db = BenchDatabase.fresh(purpose, true)) {
      QuarryCorpus corpus = QuarryCorpus.load(db, Tenants.DEFAULT, model.modelName(),
          c.docs().stream().map(TestCollection.Doc::id).toList(),
          c.docs().stream().map(TestCollection.Doc::text).toList(), vectors.docs());
      try (QuarryStack quarry = new QuarryStack(db.config(), embedder)) {
        measured = new java.util.EnumMap<>(SearchMode.class);
        for (SearchMode mode : SearchMode.values()) {
          QuarryRetriever r = new QuarryRetriever(quarry.search(), corpus, Tenants.DEFAULT, mode);
          List<List<String>> runs = new ArrayList<>();
          for (int i : judged) {
            runs.add(r.rank(c.queries().get(i).text(), vectors.queries().get(i), RetrievalBench.DEPTH));
          }
          measured.put(mode, RetrievalBench.score(r.name(), runs, c, judged).ndcg10());
        }
      }
    }
  }

  /** The Quarry hybrid nDCG@10 (all queries) of the Cranfield table in "Retrieval quality". */
  static double recordedHybrid(String benchmarks) {
    int section = benchmarks.indexOf("\n## Retrieval quality\n");
    int table = benchmarks.indexOf("\n### cranfield:", section);
    assertThat(section).as("BENCHMARKS.md has a Retrieval quality section").isGreaterThanOrEqualTo(0);
    assertThat(table).as("its Cranfield table").isGreaterThan(section);
    int end = benchmarks.indexOf("\n### ", table + 1);
    Matcher m = HYBRID_ROW.matcher(benchmarks.substring(table, end < 0 ? benchmarks.length() : end));
    assertThat(m.find()).as("a Quarry hybrid row in the Cranfield table").isTrue();
    return Double.parseDouble(m.group(1));
  }

  @Test
  @DisplayName("hybrid nDCG@10 is within 0.01 of the recorded figure")
  void hybridAsRecorded() {
    assertThat(measured.get(SearchMode.HYBRID)).isCloseTo(recorded, org.assertj.core.data.Offset.offset(TOLERANCE));
  }

  @Test
  @DisplayName("hybrid is not below the vector ranking alone, nor below BM25 alone")
  void hybridAtLeastEitherHalf() {
    assertThat(measured.get(SearchMode.HYBRID))
        .isGreaterThanOrEqualTo(measured.get(SearchMode.VECTOR))
        .isGreaterThanOrEqualTo(measured.get(SearchMode.FULL_TEXT));
  }

  @Test
  @DisplayName("the recorded figure is read from the Cranfield table, not another collection's")
  void readsTheCranfieldRow() {
    String text = "# Benchmarks\n\n## Retrieval quality\n\n### vaswani: x\n\n| system | nDCG@10 |\n"
        + "| Quarry hybrid (a) | 0.5000 | 1 |\n\n### cranfield: y\n\n| Quarry full-text only | 0.3000 |\n"
        + "| Quarry hybrid (b) | 0.4152 | 0.4 |\n\n### msmarco: z\n\n| Quarry hybrid (c) | 0.8000 |\n";
    assertThat(recordedHybrid(text)).isEqualTo(0.4152);
  }
}
