package dev.quarry.bench;

import dev.quarry.search.Embedder;
import dev.quarry.ingest.Chunker;
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

  ModelBench(BenchPaths paths) {
    this.paths = paths;
  }

  String run() {
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    StringBuilder out = new StringBuilder();
    out.append("""
        Cranfield (%d documents, %d judged queries), each model ranking by exact cosine similarity
        over its own vectors. Speed: all %d documents embedded in batches of 32 (passages/s), then
        every query embedded one at a time (p50 ms). Both models are the quantized ONNX builds that
        LangChain4j bundles, run in process through `OnnxEmbedder` (its session settings; bge-small
        with its query instruction).

        "At chunk length": Cranfield's abstracts average under 1,000 characters, Quarry's chunks
        reach %,d. Here every document is embedded inside text of other documents (the ones after
        it in the collection, before, after or around it in turn) up to %,d characters, so each
        model reads passages as long as the chunks it will be given, with the judged text a part of
        them. all-MiniLM-L6-v2 was trained on inputs of at most 128 word pieces, bge-small on 512.

        | model | passages | nDCG@10 | recall@100 | MRR@10 | passages/s | query p50 ms |
        |---|---|---:|---:|---:|---:|---:|
        """.formatted(cranfield.docs().size(), cranfield.judgedQueries().size(),
        cranfield.docs().size(), Chunker.MAX_CHARS, Chunker.MAX_CHARS));
    List<String> plain = cranfield.docs().stream().map(TestCollection.Doc::text).toList();
    List<String> padded = padded(plain, Chunker.MAX_CHARS);
    for (String name : OnnxEmbedder.MODELS) {
      OnnxEmbedder model = new OnnxEmbedder(name);
      out.append(row(cranfield, model, "abstracts", plain)).append('\n');
      out.append(row(cranfield, model, "at chunk length", padded)).append('\n');
    }
    out.append("""

        The default (QUARRY_EMBEDDING_MODEL) is %s; the retrieval, latency and ingestion sections run
        with it. Why, with hybrid search and the whole pipeline measured on both: "Embedding model: the
        choice", the section after this one.
        """.formatted(OnnxEmbedder.DEFAULT));
    return out.toString();
  }

  /** Each text inside the texts after it, up to {@code length} characters; its place rotates. */
  static List<String> padded(List<String> texts, int length) {
    List<String> out = new ArrayList<>(texts.size());
    for (int i = 0; i < texts.size(); i++) {
      String own = texts.get(i);
      StringBuilder filler = new StringBuilder();
      for (int j = i + 1; filler.length() < length - own.length(); j++) {
        filler.append(texts.get(j % texts.size())).append(' ');
      }
      String fill = filler.substring(0, Math.max(0, Math.min(filler.length(), length - own.length())));
      int cut = switch (i % 3) {
        case 0 -> 0;
        case 1 -> fill.length();
        default -> fill.length() / 2;
      };
      cut = Math.max(0, fill.lastIndexOf(' ', cut) + 1);
      out.add((fill.substring(0, cut) + own + " " + fill.substring(cut)).strip());
    }
    return out;
  }

  private static String row(TestCollection c, Embedder model, String passages, List<String> texts) {
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
    return String.format(Locale.ROOT, "| %s | %s | %.4f | %.4f | %.4f | %.1f | %.1f |", model.modelName(),
        passages, ndcg / n, recall / n, mrr / n, passagesPerSecond, Percentiles.of(queryMs).p50());
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
}
