package dev.quarry.search;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One tenant's BM25 postings as the database held them at one {@code term_version}, in memory, so
 * that a search scores them here instead of in a statement that reads and sums thousands of index
 * rows. Immutable once built; {@link TermIndexes} keeps one per tenant and replaces it when the
 * version moves.
 *
 * <p>{@link #rank} is {@link SearchSql}'s full-text ranking computed over these arrays: the same
 * terms (the statement that reads their document frequencies chooses them, computes their idf and
 * marks the essential ones), the same per-posting weight, the same pool of the essential terms'
 * best chunks, the common terms added to those alone, the same ties broken by chunk id in
 * PostgreSQL's uuid order. Chunks are numbered in that order, so the tie-break is a comparison of
 * their numbers.
 */
final class TermIndex implements TenantCopies.Copy {
  /** A query term as the database chose it. */
  record Term(String term, double idf, boolean essential) {}

  private record Postings(int[] chunks, short[] tf) {}

  final long version;
  private final long[] chunkHi;
  private final long[] chunkLo;
  private final int[] tokenCount;
  private final int[] documentOf;
  private final UUID[] documents;
  private final Map<UUID, Integer> documentNumbers;
  private final Map<String, Postings> postings;
  private final long postingCount;
  private final long termBytes;

  private TermIndex(long version, long[] chunkHi, long[] chunkLo, int[] tokenCount, int[] documentOf,
      UUID[] documents, Map<UUID, Integer> documentNumbers, Map<String, Postings> postings,
      long postingCount, long termBytes) {
    this.version = version;
    this.chunkHi = chunkHi;
    this.chunkLo = chunkLo;
    this.tokenCount = tokenCount;
    this.documentOf = documentOf;
    this.documents = documents;
    this.documentNumbers = documentNumbers;
    this.postings = postings;
    this.postingCount = postingCount;
    this.termBytes = termBytes;
  }

  @Override
  public long version() {
    return version;
  }

  int chunks() {
    return chunkHi.length;
  }

  @Override
  public String toString() {
    return "BM25 postings at version " + version + ": " + chunks() + " chunks, " + postingCount
        + " postings, " + terms() + " terms";
  }

  long postings() {
    return postingCount;
  }

  int terms() {
    return postings.size();
  }

  /** Heap taken, estimated the way {@link TermIndexes} reserves it before a build. */
  @Override
  public long bytes() {
    return estimateBytes(chunks(), postingCount, terms(), termBytes, documents.length);
  }

  /**
   * About what an index of this shape takes on the heap; {@code termBytes} is the terms' length in
   * UTF-8, which is never less than what their characters take in a Java string.
   */
  static long estimateBytes(long chunks, long postings, long terms, long termBytes, long documents) {
    // Per posting an int and a short; per chunk two longs and two ints; per term its map entry,
    // its key's headers and two array headers, then the key's characters; per document its UUID
    // and map entry.
    return postings * 6 + chunks * 24 + terms * 120 + termBytes + documents * 100;
  }

  /** The length of a term in UTF-8, as PostgreSQL's {@code octet_length} counts it. */
  static long utf8Length(String term) {
    long n = 0;
    for (int i = 0; i < term.length(); i++) {
      char c = term.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < term.length()
          && Character.isLowSurrogate(term.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /**
   * The best {@code candidates} chunks for {@code terms} (in the order the database gave them:
   * rarest first), or fewer when fewer hold an essential term; {@code scope} null for all of the
   * tenant's documents.
   */
  List<RankedChunk> rank(List<Term> terms, double avgdl, int pool, int candidates, UUID[] scope) {
    boolean[] inScope = null;
    if (scope != null) {
      inScope = new boolean[documents.length];
      for (UUID d : scope) {
        Integer n = documentNumbers.get(d);
        if (n != null) {
          inScope[n] = true;
        }
      }
    }
    double k1 = SearchSql.K1;
    double b = SearchSql.B;
    double k1PlusOne = k1 + 1;
    Scratch scratch = Scratch.of(chunks());
    double[] sum = scratch.sum;
    int[] touched = scratch.touched;
    int touchedCount = 0;
    // Essential terms summed over every chunk (in scope) that holds one, in the terms' order.
    List<Term> rest = new ArrayList<>();
    for (Term t : terms) {
      if (!t.essential()) {
        rest.add(t);
        continue;
      }
      Postings p = postings.get(t.term());
      if (p == null) {
        continue;
      }
      for (int i = 0; i < p.chunks.length; i++) {
        int c = p.chunks[i];
        if (inScope != null && !inScope[documentOf[c]]) {
          continue;
        }
        double w = weight(t.idf(), p.tf[i], tokenCount[c], avgdl, k1, b, k1PlusOne);
        if (scratch.stamp[c] != scratch.generation) {
          scratch.stamp[c] = scratch.generation;
          sum[c] = w;
          if (touchedCount == touched.length) {
            touched = scratch.growTouched();
          }
          touched[touchedCount++] = c;
        } else {
          sum[c] += w;
        }
      }
    }
    int[] pooled = top(touched, touchedCount, sum, pool);
    // The common terms, looked up in the pooled chunks only, summed apart and then added.
    double[] restScore = new double[pooled.length];
    for (Term t : rest) {
      Postings p = postings.get(t.term());
      if (p == null) {
        continue;
      }
      for (int j = 0; j < pooled.length; j++) {
        int c = pooled[j];
        int i = Arrays.binarySearch(p.chunks, c);
        if (i >= 0) {
          restScore[j] += weight(t.idf(), p.tf[i], tokenCount[c], avgdl, k1, b, k1PlusOne);
        }
      }
    }
    for (int j = 0; j < pooled.length; j++) {
      sum[pooled[j]] = sum[pooled[j]] + restScore[j];
    }
    int[] best = top(pooled, pooled.length, sum, candidates);
    List<RankedChunk> hits = new ArrayList<>(best.length);
    for (int c : best) {
      hits.add(new RankedChunk(new UUID(chunkHi[c], chunkLo[c]), documents[documentOf[c]], sum[c]));
    }
    scratch.generation++;
    return hits;
  }

  /** SearchSql's BM25 weight of one posting, operation for operation. */
  private static double weight(double idf, int tf, int tokens, double avgdl, double k1, double b,
      double k1PlusOne) {
    return idf * tf * k1PlusOne / (tf + k1 * (1 - b + b * tokens / avgdl));
  }

  /** x ranks before y: the higher score, then the lower number (uuid order). */
  private static boolean before(int x, int y, double[] score) {
    return score[x] > score[y] || (score[x] == score[y] && x < y);
  }

  /**
   * The {@code k} best of the first {@code n} chunks in {@code among}, best first: a heap of the k
   * best so far, whose root is the worst of them, then the survivors sorted.
   */
  private static int[] top(int[] among, int n, double[] score, int k) {
    int size = Math.min(k, n);
    int[] heap = new int[size];
    int filled = 0;
    for (int i = 0; i < n; i++) {
      int c = among[i];
      if (filled < size) {
        heap[filled] = c;
        int at = filled++;
        while (at > 0) {
          int parent = (at - 1) >>> 1;
          if (!before(heap[parent], heap[at], score)) {
            break;
          }
          int swap = heap[parent];
          heap[parent] = heap[at];
          heap[at] = swap;
          at = parent;
        }
      } else if (size > 0 && before(c, heap[0], score)) {
        heap[0] = c;
        int at = 0;
        while (true) {
          int left = 2 * at + 1;
          int right = left + 1;
          int worst = at;
          if (left < size && before(heap[worst], heap[left], score)) {
            worst = left;
          }
          if (right < size && before(heap[worst], heap[right], score)) {
            worst = right;
          }
          if (worst == at) {
            break;
          }
          int swap = heap[worst];
          heap[worst] = heap[at];
          heap[at] = swap;
          at = worst;
        }
      }
    }
    Integer[] sorted = new Integer[size];
    for (int i = 0; i < size; i++) {
      sorted[i] = heap[i];
    }
    Arrays.sort(sorted, (x, y) -> before(x, y, score) ? -1 : before(y, x, score) ? 1 : 0);
    int[] out = new int[size];
    for (int i = 0; i < size; i++) {
      out[i] = sorted[i];
    }
    return out;
  }

  /**
   * Per-thread sums, reused from search to search: a chunk's sum counts only when its stamp is the
   * current generation, so nothing is cleared between searches.
   */
  private static final class Scratch {
    private static final ThreadLocal<Scratch> LOCAL = ThreadLocal.withInitial(Scratch::new);
    double[] sum = new double[0];
    int[] stamp = new int[0];
    int[] touched = new int[1024];
    int generation = 1;

    static Scratch of(int chunks) {
      Scratch s = LOCAL.get();
      if (s.sum.length < chunks) {
        s.sum = new double[chunks];
        s.stamp = new int[chunks];
        s.generation = 1;
      }
      if (s.generation == Integer.MAX_VALUE) {
        Arrays.fill(s.stamp, 0);
        s.generation = 1;
      }
      return s;
    }

    int[] growTouched() {
      touched = Arrays.copyOf(touched, touched.length * 2);
      return touched;
    }
  }

  /** PostgreSQL's uuid order: the 16 bytes compared unsigned, most significant first. */
  static int compareUuids(long hiA, long loA, long hiB, long loB) {
    int c = Long.compareUnsigned(hiA, hiB);
    return c != 0 ? c : Long.compareUnsigned(loA, loB);
  }

  /**
   * Builds an index from the database's rows: first every chunk in uuid order, then every posting
   * in (term, chunk) order, as one snapshot gave them. Anything out of that order is refused, not
   * indexed wrongly.
   */
  static final class Builder {
    private final long version;
    private long[] hi = new long[1024];
    private long[] lo = new long[1024];
    private int[] tokens = new int[1024];
    private int[] documentOf = new int[1024];
    private int chunkCount;
    private final List<UUID> documents = new ArrayList<>();
    private final Map<UUID, Integer> documentNumbers = new HashMap<>();
    private final Map<String, Postings> postings = new HashMap<>();
    private long postingCount;
    private long termBytes;
    private String term;
    private int[] termChunks = new int[256];
    private short[] termTf = new short[256];
    private int termSize;

    Builder(long version) {
      this.version = version;
    }

    void chunk(UUID id, UUID document, int tokenCount) {
      long h = id.getMostSignificantBits();
      long l = id.getLeastSignificantBits();
      if (chunkCount > 0 && compareUuids(hi[chunkCount - 1], lo[chunkCount - 1], h, l) >= 0) {
        throw new IllegalStateException("chunks out of uuid order at " + id);
      }
      if (chunkCount == hi.length) {
        int n = hi.length * 2;
        hi = Arrays.copyOf(hi, n);
        lo = Arrays.copyOf(lo, n);
        tokens = Arrays.copyOf(tokens, n);
        documentOf = Arrays.copyOf(documentOf, n);
      }
      Integer d = documentNumbers.get(document);
      if (d == null) {
        d = documents.size();
        documents.add(document);
        documentNumbers.put(document, d);
      }
      hi[chunkCount] = h;
      lo[chunkCount] = l;
      tokens[chunkCount] = tokenCount;
      documentOf[chunkCount] = d;
      chunkCount++;
    }

    void posting(String lexeme, UUID chunk, int tf) {
      if (tf < 1 || tf > Short.MAX_VALUE) {
        throw new IllegalStateException("term frequency " + tf + " of " + lexeme + " out of range");
      }
      if (!lexeme.equals(term)) {
        finishTerm();
        if (postings.containsKey(lexeme)) {
          throw new IllegalStateException("postings of " + lexeme + " not together");
        }
        term = lexeme;
      }
      int c = find(chunk);
      if (termSize > 0 && termChunks[termSize - 1] >= c) {
        throw new IllegalStateException("postings of " + lexeme + " out of chunk order");
      }
      if (termSize == termChunks.length) {
        termChunks = Arrays.copyOf(termChunks, termSize * 2);
        termTf = Arrays.copyOf(termTf, termSize * 2);
      }
      termChunks[termSize] = c;
      termTf[termSize] = (short) tf;
      termSize++;
    }

    private int find(UUID chunk) {
      long h = chunk.getMostSignificantBits();
      long l = chunk.getLeastSignificantBits();
      int low = 0;
      int high = chunkCount - 1;
      while (low <= high) {
        int mid = (low + high) >>> 1;
        int c = compareUuids(hi[mid], lo[mid], h, l);
        if (c < 0) {
          low = mid + 1;
        } else if (c > 0) {
          high = mid - 1;
        } else {
          return mid;
        }
      }
      throw new IllegalStateException("posting of a chunk not listed: " + chunk);
    }

    private void finishTerm() {
      if (term != null && termSize > 0) {
        postings.put(term, new Postings(Arrays.copyOf(termChunks, termSize), Arrays.copyOf(termTf, termSize)));
        postingCount += termSize;
        termBytes += utf8Length(term);
      }
      term = null;
      termSize = 0;
    }

    TermIndex build() {
      finishTerm();
      return new TermIndex(version, Arrays.copyOf(hi, chunkCount), Arrays.copyOf(lo, chunkCount),
          Arrays.copyOf(tokens, chunkCount), Arrays.copyOf(documentOf, chunkCount),
          documents.toArray(UUID[]::new), Map.copyOf(documentNumbers), Map.copyOf(postings), postingCount, termBytes);
    }
  }
}
