package dev.quarry.search;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.CharSpan;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The in-process embedders, through ONNX Runtime, so no network is needed: one of the two quantized
 * models LangChain4j bundles. bge-small-en-v1.5 expects an instruction in front of queries (not
 * passages); all-MiniLM-L6-v2 has half the layers, no instruction, and embeds a query in about a
 * third of the time (BENCHMARKS.md, "Embedding model choice").
 *
 * <p>Two sessions of the same model, because the work differs. Passages (ingest) come in batches:
 * one ONNX Runtime thread per run and one run per core, so LangChain4j's per-passage parallelism is
 * not multiplied by ONNX Runtime's own pool (four busy threads on two cores; measured 7.6 → 11.8
 * passages/s, identical vectors). Queries come one at a time: a run may use two threads. Neither
 * session spin-waits: spinning threads pay off on idle cores but compete with the database and
 * everything else on a small shared machine (a query embeds in less than half the time without).
 *
 * <p>A long query (a pasted paragraph, a model's verbose question) is cut to {@link
 * #QUERY_TOKENS} of the model's tokens before it is embedded: its first half and its last half, so a
 * question at either end of a pasted passage is kept. The model's time grows faster than the text
 * past a couple of hundred tokens (BENCHMARKS.md, "Long queries"), while BM25 still gets every word;
 * cutting is deliberate, and cheaper than chunking the query and pooling the pieces' vectors.
 */
public final class OnnxEmbedder implements Embedder {
  public static final String BGE_SMALL = "bge-small-en-v1.5-q";
  public static final String MINILM = "all-MiniLM-L6-v2-q";
  /** QUARRY_EMBEDDING_MODEL's default. */
  /** The configured default ({@code QUARRY_EMBEDDING_MODEL}'s), which is {@link #BGE_SMALL}. */
  public static final String DEFAULT = dev.quarry.config.Config.DEFAULT_EMBEDDING_MODEL;

  /** A bundled model: where its files are, how it pools, what it puts in front of a query. */
  private record Model(String name, Class<?> bundle, String onnx, String tokenizer,
      PoolingMode pooling, String queryPrefix) {}

  private static final Model BGE = new Model(BGE_SMALL, BgeSmallEnV15QuantizedEmbeddingModel.class,
      "/bge-small-en-v1.5-q.onnx", "/bge-small-en-v1.5-q-tokenizer.json", PoolingMode.CLS,
      "Represent this sentence for searching relevant passages: ");
  private static final Model MINI = new Model(MINILM, AllMiniLmL6V2QuantizedEmbeddingModel.class,
      "/all-minilm-l6-v2-q.onnx", "/all-minilm-l6-v2-q-tokenizer.json", PoolingMode.MEAN, "");
  private static final List<Model> BUNDLED = List.of(BGE, MINI);
  /**
   * The most tokens of a query the model runs on (the query instruction not counted); longer
   * queries keep their first and last {@code QUERY_TOKENS / 2}.
   */
  public static final int QUERY_TOKENS = 256;

  /** The names the onnx provider accepts. */
  public static final List<String> MODELS = BUNDLED.stream().map(Model::name).toList();

  private final Model model;
  private final EmbeddingModel passages;
  private final EmbeddingModel queries;
  private final HuggingFaceTokenizer tokenizer;

  /** The default model, {@link #DEFAULT}. */
  public OnnxEmbedder() {
    this(DEFAULT);
  }

  /**
   * One of {@link #MODELS}, named as QUARRY_EMBEDDING_MODEL names it (case does not matter); any
   * other name is refused with {@link IllegalArgumentException} before a model is loaded.
   */
  public OnnxEmbedder(String modelName) {
    this.model = BUNDLED.stream().filter(m -> m.name().equalsIgnoreCase(modelName)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("the onnx provider has no model "
            + modelName + "; it has " + String.join(" and ", MODELS)));
    int cores = Runtime.getRuntime().availableProcessors();
    this.passages = new Runs(encoder(model, 1), passageThreads(cores));
    this.queries = new Runs(encoder(model, Math.min(2, cores)), Runnable::run);
    this.tokenizer = tokenizer(model);
  }

  @Override
  public String modelName() {
    return model.name();
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
    return queries.embed(model.queryPrefix() + withinTokens(query, QUERY_TOKENS)).content().vector();
  }

  /**
   * The query itself when it has at most {@code budget} tokens; otherwise the whole words within its
   * first {@code budget / 2} and its last {@code budget - budget / 2} tokens, joined by a space (a
   * word longer than half the budget is cut at a token boundary instead).
   */
  String withinTokens(String query, int budget) {
    Encoding encoding = tokenizer.encode(query, false, false);
    CharSpan[] spans = encoding.getCharTokenSpans();
    if (spans.length <= budget || budget < 2) {
      return query;
    }
    int head = budget / 2;
    CharSpan headSpan = spans[head - 1];
    CharSpan tailSpan = spans[spans.length - (budget - head)];
    if (headSpan == null || tailSpan == null || headSpan.getEnd() > tailSpan.getStart()
        || tailSpan.getStart() > query.length()) {
      return query; // offsets the text cannot be cut at: leave it to the encoder's own windows
    }
    int headEnd = headSpan.getEnd();
    if (headEnd < query.length() && !Character.isWhitespace(query.charAt(headEnd))) {
      int space = lastWhitespace(query, headEnd);
      headEnd = space > 0 ? space : headEnd;
    }
    int tailStart = tailSpan.getStart();
    if (tailStart > 0 && !Character.isWhitespace(query.charAt(tailStart - 1))) {
      int space = firstWhitespace(query, tailStart);
      tailStart = space >= 0 && space + 1 < query.length() ? space + 1 : tailStart;
    }
    return query.substring(0, headEnd).strip() + " " + query.substring(tailStart).strip();
  }

  private static int lastWhitespace(String s, int before) {
    for (int i = before - 1; i >= 0; i--) {
      if (Character.isWhitespace(s.charAt(i))) {
        return i;
      }
    }
    return -1;
  }

  private static int firstWhitespace(String s, int from) {
    for (int i = from; i < s.length(); i++) {
      if (Character.isWhitespace(s.charAt(i))) {
        return i;
      }
    }
    return -1;
  }

  /** The bundled model and tokenizer on a session with the given threads per run. */
  private static OnnxBertBiEncoder encoder(Model m, int threadsPerRun) {
    try (InputStream model = resource(m, m.onnx());
        InputStream tokenizer = resource(m, m.tokenizer());
        OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      options.setIntraOpNumThreads(threadsPerRun);
      options.setInterOpNumThreads(1);
      options.addConfigEntry("session.intra_op.allow_spinning", "0");
      options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
      OrtEnvironment env = OrtEnvironment.getEnvironment();
      OrtSession session = env.createSession(model.readAllBytes(), options);
      return new OnnxBertBiEncoder(env, session, tokenizer, m.pooling());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the bundled " + m.name() + " model", e);
    } catch (OrtException e) {
      throw new IllegalStateException("ONNX Runtime cannot load " + m.name() + ": " + e.getMessage(), e);
    }
  }

  /** The model's own tokenizer, to count and cut a query's tokens. */
  private static HuggingFaceTokenizer tokenizer(Model m) {
    try (InputStream tokenizer = resource(m, m.tokenizer())) {
      return HuggingFaceTokenizer.newInstance(tokenizer, Map.of("padding", "false", "truncation", "false"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the bundled " + m.name() + " tokenizer", e);
    }
  }

  private static InputStream resource(Model m, String name) {
    // The class literal only locates the jar's resources; it does not initialise the stock model.
    InputStream in = m.bundle().getResourceAsStream(name);
    if (in == null) {
      throw new IllegalStateException(name + " is missing from the classpath (the jar that holds "
          + m.bundle().getSimpleName() + ")");
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
