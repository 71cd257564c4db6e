package dev.quarry.search;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntField;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;

/**
 * One tenant's chunk vectors as the database held them at one {@code term_version}, in an HNSW
 * graph in memory (Lucene's, over a heap directory), so that a search finds the nearest chunks
 * here instead of in a statement: the same ranking pgvector's HNSW index approximates, cosine
 * similarity of the chunk's vector and the query's, found in well under a millisecond at 100,000
 * chunks instead of a round trip. Immutable once built; {@link VectorIndexes} keeps one per tenant
 * and replaces it when the version moves.
 *
 * <p>Vectors are normalised when copied (cosine is then the dot product), and a vector of zero
 * length or with a non-finite component is left out: no cosine is defined for it. Chunk number
 * {@code i} is Lucene's document {@code i}: one writer thread and no merges keep them in order.
 */
final class VectorIndex implements TenantCopies.Copy {
  private static final String VECTOR = "v";
  private static final String DOCUMENT = "d";
  /**
   * The fewest candidates the graph search keeps (its beam), however few are asked for: a beam of
   * ten finds a quarter of the true ten nearest for a query far from every chunk. pgvector's
   * {@code hnsw.ef_search} plays this part in the database's ranking, set by search to at least 40.
   */
  static final int MIN_BEAM = 100;

  final long version;
  private final int dimensions;
  private final long[] chunkHi;
  private final long[] chunkLo;
  private final int[] documentOf;
  private final UUID[] documents;
  private final Map<UUID, Integer> documentNumbers;
  private final IndexSearcher searcher;
  private final long bytes;

  private VectorIndex(long version, int dimensions, long[] chunkHi, long[] chunkLo, int[] documentOf,
      UUID[] documents, Map<UUID, Integer> documentNumbers, IndexSearcher searcher, long bytes) {
    this.version = version;
    this.dimensions = dimensions;
    this.chunkHi = chunkHi;
    this.chunkLo = chunkLo;
    this.documentOf = documentOf;
    this.documents = documents;
    this.documentNumbers = documentNumbers;
    this.searcher = searcher;
    this.bytes = bytes;
  }

  @Override
  public long version() {
    return version;
  }

  /** Heap taken: the directory's files and the chunk and document tables beside them. */
  @Override
  public long bytes() {
    return bytes;
  }

  int chunks() {
    return chunkHi.length;
  }

  @Override
  public String toString() {
    return "vectors at version " + version + ": " + chunks() + " chunks of " + dimensions
        + " dimensions";
  }

  /** About what a copy of this shape takes: the vectors, the graph's links, the tables. */
  static long estimateBytes(long chunks, int dimensions, long documents) {
    return chunks * (4L * dimensions + 100) + documents * 100 + 65_536;
  }

  /**
   * What a build holds at its peak: the rows as read, the writer's copy of them and the files it
   * writes them to, and the graph being built.
   */
  static long peakBytes(long chunks, int dimensions, long documents) {
    return 3 * estimateBytes(chunks, dimensions, documents);
  }

  /**
   * The {@code k} chunks nearest {@code query} by cosine similarity, nearest first, with their
   * similarity as pgvector gives it (1 - cosine distance); {@code scope} null for all of the
   * tenant's documents.
   */
  List<RankedChunk> nearest(float[] query, int k, UUID[] scope) {
    if (query.length != dimensions) {
      throw new IllegalArgumentException("query vector has " + query.length + " dimensions, the copy "
          + dimensions);
    }
    float[] unit = normalised(query);
    if (unit == null || chunks() == 0 || k < 1) {
      return List.of();
    }
    Query filter = null;
    if (scope != null) {
      int[] wanted = Arrays.stream(scope).map(documentNumbers::get)
          .filter(n -> n != null).mapToInt(Integer::intValue).distinct().toArray();
      if (wanted.length == 0) {
        return List.of();
      }
      filter = IntField.newSetQuery(DOCUMENT, wanted);
    }
    TopDocs top;
    try {
      int beam = Math.max(k, MIN_BEAM);
      top = searcher.search(new KnnFloatVectorQuery(VECTOR, unit, beam, filter), k);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<RankedChunk> out = new ArrayList<>(top.scoreDocs.length);
    for (ScoreDoc hit : top.scoreDocs) {
      int n = hit.doc;
      // Lucene's dot-product score of unit vectors is (1 + cosine) / 2.
      double similarity = 2.0 * hit.score - 1.0;
      out.add(new RankedChunk(new UUID(chunkHi[n], chunkLo[n]), documents[documentOf[n]], similarity));
    }
    return out;
  }

  /** The vector scaled to length 1, or null when it has none (zero, or not finite). */
  static float[] normalised(float[] v) {
    double sum = 0;
    for (float x : v) {
      if (!Float.isFinite(x)) {
        return null;
      }
      sum += (double) x * x;
    }
    if (sum == 0 || !Double.isFinite(sum)) {
      return null;
    }
    double scale = 1.0 / Math.sqrt(sum);
    float[] out = new float[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = (float) (v[i] * scale);
    }
    return out;
  }

  /** Takes the rows in (cheaply, on the event loop); {@link #build} makes the graph (slowly). */
  static final class Builder {
    private final long version;
    private final int dimensions;
    private final List<float[]> vectors = new ArrayList<>();
    private long[] hi = new long[1024];
    private long[] lo = new long[1024];
    private int[] documentOf = new int[1024];
    private final List<UUID> documents = new ArrayList<>();
    private final Map<UUID, Integer> documentNumbers = new HashMap<>();

    Builder(long version, int dimensions) {
      this.version = version;
      this.dimensions = dimensions;
    }

    void chunk(UUID id, UUID document, float[] vector) {
      if (vector == null || vector.length != dimensions) {
        throw new IllegalStateException("chunk " + id + " has a vector of "
            + (vector == null ? "no" : Integer.toString(vector.length)) + " dimensions, not " + dimensions);
      }
      float[] unit = normalised(vector);
      if (unit == null) {
        return;
      }
      int n = vectors.size();
      if (n == hi.length) {
        hi = Arrays.copyOf(hi, n * 2);
        lo = Arrays.copyOf(lo, n * 2);
        documentOf = Arrays.copyOf(documentOf, n * 2);
      }
      Integer d = documentNumbers.get(document);
      if (d == null) {
        d = documents.size();
        documents.add(document);
        documentNumbers.put(document, d);
      }
      hi[n] = id.getMostSignificantBits();
      lo[n] = id.getLeastSignificantBits();
      documentOf[n] = d;
      vectors.add(unit);
    }

    VectorIndex build() {
      int n = vectors.size();
      ByteBuffersDirectory directory = new ByteBuffersDirectory();
      IndexWriterConfig config = new IndexWriterConfig()
          .setMergePolicy(NoMergePolicy.INSTANCE)
          .setMaxBufferedDocs(Math.max(2, n + 1))
          .setRAMBufferSizeMB(IndexWriterConfig.DISABLE_AUTO_FLUSH)
          .setCommitOnClose(true);
      try {
        try (IndexWriter writer = new IndexWriter(directory, config)) {
          for (int i = 0; i < n; i++) {
            Document doc = new Document();
            doc.add(new KnnFloatVectorField(VECTOR, vectors.get(i), VectorSimilarityFunction.DOT_PRODUCT));
            doc.add(new IntField(DOCUMENT, documentOf[i], Field.Store.NO));
            writer.addDocument(doc);
            vectors.set(i, null); // the writer has its own copy
          }
        }
        DirectoryReader reader = DirectoryReader.open(directory);
        if (reader.maxDoc() != n || reader.leaves().size() > 1) {
          throw new IllegalStateException("copy of " + n + " vectors came out as " + reader.maxDoc()
              + " documents in " + reader.leaves().size() + " segments");
        }
        long files = 0;
        for (String file : directory.listAll()) {
          files += directory.fileLength(file);
        }
        long tables = 20L * n + 100L * documents.size();
        IndexSearcher searcher = new IndexSearcher(reader);
        searcher.setQueryCache(null); // each query vector is new: nothing to cache
        return new VectorIndex(version, dimensions, Arrays.copyOf(hi, n), Arrays.copyOf(lo, n),
            Arrays.copyOf(documentOf, n), documents.toArray(UUID[]::new), Map.copyOf(documentNumbers),
            searcher, files + tables);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
