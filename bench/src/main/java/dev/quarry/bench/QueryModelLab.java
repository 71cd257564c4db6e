package dev.quarry.bench;

import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.quarry.search.OnnxEmbedder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Single short queries through several embedding models, alternating model by model per query so
 * that all see the same load: how long one query takes at batch size 1, where quantised kernels
 * need not win. Models are LangChain4j's bundled ONNX builds, loaded by class name so that one not
 * on the class path (the fp32 bge-small is not a dependency) is skipped; plus Quarry's
 * OnnxEmbedder (bge-small-q with its own session settings and the query instruction).
 *
 * <p>{@code QueryModelLab [rounds]}; every bench query (Vaswani, then Cranfield) once per round.
 */
public final class QueryModelLab {
  private QueryModelLab() {}

  private static final String BGE_INSTRUCTION =
      "Represent this sentence for searching relevant passages: ";

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    BenchPaths paths = BenchPaths.detect();
    List<String> queries = new ArrayList<>();
    TestCollections.vaswani(paths.retrieval()).queries().forEach(q -> queries.add(q.text()));
    TestCollections.cranfield(paths.retrieval()).queries().forEach(q -> queries.add(q.text()));

    OnnxEmbedder quarry = new OnnxEmbedder();
    Map<String, java.util.function.Function<String, float[]>> models = new LinkedHashMap<>();
    models.put("OnnxEmbedder bge-small-en-v1.5-q (instruction)", quarry::embedQuery);
    add(models, "LangChain4j bge-small-en-v1.5-q (instruction)",
        "dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel", true);
    add(models, "LangChain4j bge-small-en-v1.5 fp32 (instruction)",
        "dev.langchain4j.model.embedding.onnx.bgesmallenv15.BgeSmallEnV15EmbeddingModel", true);
    add(models, "LangChain4j all-MiniLM-L6-v2-q",
        "dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel", false);

    for (var m : models.values()) {
      for (int i = 0; i < 20; i++) {
        m.apply(queries.get(i));
      }
    }
    for (int r = 0; r < rounds; r++) {
      Map<String, double[]> ms = new LinkedHashMap<>();
      models.keySet().forEach(k -> ms.put(k, new double[queries.size()]));
      List<String> names = new ArrayList<>(models.keySet());
      for (int i = 0; i < queries.size(); i++) {
        for (int j = 0; j < names.size(); j++) {
          String name = names.get((i + j) % names.size());
          long start = System.nanoTime();
          models.get(name).apply(queries.get(i));
          ms.get(name)[i] = (System.nanoTime() - start) / 1e6;
        }
      }
      for (var e : ms.entrySet()) {
        Percentiles p = Percentiles.of(e.getValue());
        System.out.printf(Locale.ROOT, "round %d  %-52s p50 %5.1f ms  p95 %5.1f ms  mean %5.1f ms%n",
            r + 1, e.getKey(), p.p50(), p.p95(), p.mean());
      }
      System.out.println("load " + java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim());
    }
    System.exit(0);
  }

  private static void add(Map<String, java.util.function.Function<String, float[]>> models, String name,
      String className, boolean instruction) {
    try {
      EmbeddingModel model = (EmbeddingModel) Class.forName(className).getConstructor().newInstance();
      models.put(name, q -> model.embed(instruction ? BGE_INSTRUCTION + q : q).content().vector());
    } catch (ReflectiveOperationException | LinkageError e) {
      System.out.println("skipped " + name + ": " + e);
    }
  }
}
