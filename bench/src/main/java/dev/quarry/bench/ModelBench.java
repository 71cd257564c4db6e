package dev.quarry.bench;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import dev.quarry.search.Embedder;
import dev.quarry.search.OnnxEmbedder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Which in-process embedding model Quarry ships by default, decided by measurement: the two small
 * quantized models LangChain4j bundles, compared on retrieval quality (exact cosine ranking, so
 * only the model differs) and on speed (passages per second, query latency) in the same run.
 */
final class ModelBench {
  private final BenchPaths paths;
  private final OnnxEmbedder bge;

  ModelBench(BenchPaths paths, OnnxEmbedder bge) {
    this.paths = paths;
    this.bge = bge;
  }

  String run() {
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    StringBuilder out = new StringBuilder();
    out.append("""
        Cranfield (%d documents, %d judged queries), each model ranking by exact cosine similarity
        over its own vectors. Speed: all %d documents embedded in batches of 32 (passages/s), then
        every query embedded one at a time (p50 ms). Both models are the quantized ONNX builds that
        LangChain4j bundles, run in process.

        | model | nDCG@10 | recall@100 | MRR@10 | passages/s | query p50 ms |
        |---|---:|---:|---:|---:|---:|
        """.formatted(cranfield.docs().size(), cranfield.judgedQueries().size(),
        cranfield.docs().size()));
    for (Embedder model : List.of(bge, new MiniLm())) {
      out.append(row(cranfield, model)).append('\n');
    }
    out.append("""

        The default is the model with the better quality; bge-small asks for an instruction in front
        of queries, which OnnxEmbedder adds.
        """);
    return out.toString();
  }

  private static String row(TestCollection c, Embedder model) {
    List<String> texts = c.docs().stream().map(TestCollection.Doc::text).toList();
    // Warm-up: the ONNX session's first runs allocate and tune.
    model.embedPassages(texts.subList(0, 32));
    long start = System.nanoTime();
    List<float[]> docs = new ArrayList<>(texts.size());
    for (int i = 0; i < texts.size(); i += 32) {
      docs.addAll(model.embedPassages(texts.subList(i, Math.min(texts.size(), i + 32))));
    }
    double passagesPerSecond = texts.size() / ((System.nanoTime() - start) / 1e9);
    List<TestCollection.Query> queries = c.judgedQueries();
    double[] queryMs = new double[queries.size()];
    double ndcg = 0;
    double recall = 0;
    double mrr = 0;
    for (int q = 0; q < queries.size(); q++) {
      long t = System.nanoTime();
      float[] query = model.embedQuery(queries.get(q).text());
      queryMs[q] = (System.nanoTime() - t) / 1e6;
      List<String> ranking = rank(query, docs, c, 100);
      Map<String, Integer> grades = c.qrels().get(queries.get(q).id());
      ndcg += Metrics.ndcg(ranking, grades, 10);
      recall += Metrics.recall(ranking, grades, 100);
      mrr += Metrics.reciprocalRank(ranking, grades, 10);
    }
    int n = queries.size();
    return String.format(Locale.ROOT, "| %s | %.4f | %.4f | %.4f | %.1f | %.1f |", model.modelName(),
        ndcg / n, recall / n, mrr / n, passagesPerSecond, Percentiles.of(queryMs).p50());
  }

  private static List<String> rank(float[] query, List<float[]> docs, TestCollection c, int k) {
    double[] scores = new double[docs.size()];
    for (int i = 0; i < docs.size(); i++) {
      float[] d = docs.get(i);
      double dot = 0;
      for (int j = 0; j < d.length; j++) {
        dot += d[j] * query[j];
      }
      scores[i] = dot;
    }
    return IntStream.range(0, docs.size()).boxed()
        .sorted(Comparator.comparingDouble((Integer i) -> -scores[i]))
        .limit(k)
        .map(i -> c.docs().get(i).id())
        .toList();
  }

  /** all-MiniLM-L6-v2 (quantized), the other model LangChain4j bundles; no query instruction. */
  private static final class MiniLm implements Embedder {
    private final EmbeddingModel model = new AllMiniLmL6V2QuantizedEmbeddingModel();

    @Override
    public String modelName() {
      return "all-MiniLM-L6-v2-q";
    }

    @Override
    public int dimensions() {
      return 384;
    }

    @Override
    public List<float[]> embedPassages(List<String> texts) {
      return model.embedAll(texts.stream().map(TextSegment::from).toList()).content().stream()
          .map(e -> e.vector()).toList();
    }

    @Override
    public float[] embedQuery(String query) {
      return model.embed(query).content().vector();
    }
  }
}
