package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The gateway's in-memory copy of a tenant's vectors ({@link VectorIndex}, {@link VectorIndexes})
 * against the exact ranking and the database's: 3,000 chunks whose vectors lie in 60 clusters
 * (so that nearest neighbours mean something and an approximate index can miss some), and queries
 * drawn near them. The copy must find nearly all of the exact nearest chunks with their exact
 * similarities, keep to a scope, be used only at the database's version (which every write to the
 * chunks moves, migration V15) and hold only its tenant's chunks.
 */
@DisplayName("Vector ranking from the gateway's copy of the vectors, against the exact and the database's")
class VectorIndexTest {
  static final int CHUNKS = 3_000;
  static final int PER_DOCUMENT = 30;

  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static final AtomicLong clock = new AtomicLong();
  static final Map<UUID, float[]> vectors = new HashMap<>();
  static final Map<UUID, UUID> documentOf = new HashMap<>();
  static final List<UUID> documents = new ArrayList<>();
  static final List<float[]> queries = new ArrayList<>();
  static int dims;
  static UUID tenant;

  @BeforeAll
  static void setUp() throws Exception {
    Embedder embedder = SharedEmbedder.get();
    dims = embedder.dimensions();
    Random random = new Random(15);
    float[][] centres = new float[60][];
    for (int i = 0; i < centres.length; i++) {
      centres[i] = near(random, null, 1.0);
    }
    List<String[]> texts = new ArrayList<>();
    for (int i = 0; i < CHUNKS; i++) {
      texts.add(new String[] {Integer.toString(i), "chunk " + i + " of the clustered corpus"});
    }
    Map<UUID, String> keys = new HashMap<>();
    try (Connection c = db.jdbc()) {
      c.setAutoCommit(false);
      tenant = new Corpus(c, embedder).tenant("clustered");
      documents.addAll(Corpus.bulk(c, tenant, texts, PER_DOCUMENT, "Clustered", embedder.modelName(),
          dims, keys));
      try (PreparedStatement set = c.prepareStatement(
          "UPDATE chunks SET embedding = ?::vector WHERE id = ? RETURNING document_id")) {
        for (UUID chunk : keys.keySet()) {
          float[] v = near(random, centres[random.nextInt(centres.length)], 0.02);
          vectors.put(chunk, v);
          set.setString(1, literal(v));
          set.setObject(2, chunk);
          try (ResultSet r = set.executeQuery()) {
            r.next();
            documentOf.put(chunk, (UUID) r.getObject(1));
          }
        }
      }
      c.commit();
    }
    for (int i = 0; i < 100; i++) {
      queries.add(near(random, centres[random.nextInt(centres.length)], 0.03));
    }
    db.prepare(vertx, service(0, new QuarryMetrics()));
  }

  /** A unit vector: {@code centre} plus Gaussian noise of {@code sigma} per dimension (or pure noise). */
  static float[] near(Random random, float[] centre, double sigma) {
    float[] v = new float[dims];
    double norm = 0;
    for (int i = 0; i < dims; i++) {
      v[i] = (float) ((centre == null ? 0 : centre[i]) + sigma * random.nextGaussian());
      norm += v[i] * v[i];
    }
    for (int i = 0; i < dims; i++) {
      v[i] /= (float) Math.sqrt(norm);
    }
    return v;
  }

  static String literal(float[] v) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < v.length; i++) {
      b.append(i == 0 ? "" : ",").append(v[i]);
    }
    return b.append(']').toString();
  }

  static double cosine(float[] a, float[] b) {
    double dot = 0;
    double na = 0;
    double nb = 0;
    for (int i = 0; i < a.length; i++) {
      dot += (double) a[i] * b[i];
      na += (double) a[i] * a[i];
      nb += (double) b[i] * b[i];
    }
    return dot / Math.sqrt(na * nb);
  }

  /** The exact {@code k} nearest chunks among those of {@code scope} (null: all). */
  static List<UUID> exact(float[] query, int k, Set<UUID> scope) {
    return vectors.entrySet().stream()
        .filter(e -> scope == null || scope.contains(documentOf.get(e.getKey())))
        .sorted(Comparator.comparingDouble((Map.Entry<UUID, float[]> e) -> -cosine(query, e.getValue())))
        .limit(k).map(Map.Entry::getKey).toList();
  }

  /** A search service whose copies have {@code memoryMb} of heap and this test's clock. */
  static SearchService service(int memoryMb, QuarryMetrics metrics) {
    return new SearchService(vertx, pool, SharedEmbedder.get(), db.config().withSearchMemoryMb(memoryMb),
        SearchService.POSTING_BUDGET, metrics, new TenantCopies(pool, memoryMb * 1024L * 1024L, clock::get));
  }

  /** Builds the tenant's vector copy now (the clock moved past any throttle) and returns it. */
  static VectorIndex built(VectorIndexes indexes, UUID of) {
    indexes.settled().await(); // builds a search started (of any kind) would take the places
    clock.addAndGet(3_600_000_000_000L);
    var build = indexes.refresh(of, -1);
    assertThat(build).as("a build starts").isNotNull();
    build.await();
    return indexes.current(of);
  }

  static double counted(QuarryMetrics metrics, String source) {
    var counter = metrics.registry().find("quarry_search_vector_rankings").tag("source", source).counter();
    return counter == null ? 0 : counter.count();
  }

  static long version(UUID of) throws Exception {
    try (Connection c = db.jdbc();
        PreparedStatement s = c.prepareStatement("SELECT term_version FROM corpus_stats WHERE tenant_id = ?")) {
      s.setObject(1, of);
      try (ResultSet r = s.executeQuery()) {
        assertThat(r.next()).isTrue();
        return r.getLong(1);
      }
    }
  }

  @Test
  @DisplayName("the copy finds the exact nearest chunks (recall@10 >= 0.97, recall@100 >= 0.99 over 100 queries) with their exact similarities, best first")
  void nearestAsExact() throws Exception {
    SearchService search = service(256, new QuarryMetrics());
    VectorIndex copy = built(search.vectorIndexes(), tenant);
    assertThat(copy.chunks()).isEqualTo(CHUNKS);
    assertThat(copy.version).isEqualTo(version(tenant));
    int found = 0;
    int found100 = 0;
    for (float[] query : queries) {
      List<RankedChunk> hits = copy.nearest(query, 100, null);
      assertThat(hits).hasSize(100);
      for (int i = 0; i < hits.size(); i++) {
        RankedChunk hit = hits.get(i);
        assertThat(hit.score()).isCloseTo(cosine(query, vectors.get(hit.chunkId())), org.assertj.core.data.Offset.offset(1e-5));
        assertThat(hit.documentId()).isEqualTo(documentOf.get(hit.chunkId()));
        if (i > 0) {
          assertThat(hit.score()).isLessThanOrEqualTo(hits.get(i - 1).score());
        }
      }
      Set<UUID> top = new HashSet<>(exact(query, 10, null));
      found += (int) hits.subList(0, 10).stream().filter(h -> top.contains(h.chunkId())).count();
      Set<UUID> top100 = new HashSet<>(exact(query, 100, null));
      found100 += (int) hits.stream().filter(h -> top100.contains(h.chunkId())).count();
    }
    System.out.printf("recall@10 %.4f, recall@100 %.4f%n", found / (10.0 * queries.size()),
        found100 / (100.0 * queries.size()));
    assertThat(found / (10.0 * queries.size())).as("recall@10").isGreaterThanOrEqualTo(0.97);
    // Search takes 100 candidates a side and scales their scores over the list, so the list's tail
    // matters too: pgvector's index finds 0.999 of the true 100 on real documents.
    assertThat(found100 / (100.0 * queries.size())).as("recall@100").isGreaterThanOrEqualTo(0.99);
  }

  @Test
  @DisplayName("a scoped search keeps to the scope's documents (unknown ids ignored) and finds their nearest chunks")
  void scoped() {
    SearchService search = service(256, new QuarryMetrics());
    VectorIndex copy = built(search.vectorIndexes(), tenant);
    Set<UUID> scope = Set.of(documents.get(3), documents.get(40), UUID.randomUUID());
    for (float[] query : queries.subList(0, 20)) {
      List<RankedChunk> hits = copy.nearest(query, 10, scope.toArray(UUID[]::new));
      assertThat(hits).hasSize(10).allSatisfy(h -> assertThat(scope).contains(h.documentId()));
      assertThat(hits.stream().map(RankedChunk::chunkId).toList()).isEqualTo(exact(query, 10, scope));
    }
    assertThat(copy.nearest(queries.get(0), 10, new UUID[] {UUID.randomUUID()})).isEmpty();
  }

  @Test
  @DisplayName("search ranks vectors from the copy once built, finding the exact nearest as well as the database's HNSW does")
  void searchUsesTheCopy() throws Exception {
    QuarryMetrics metrics = new QuarryMetrics();
    SearchService inMemory = service(256, metrics);
    SearchService inDatabase = service(0, new QuarryMetrics());
    built(inMemory.vectorIndexes(), tenant);
    clock.addAndGet(3_600_000_000_000L);
    var terms = inMemory.termIndexes().refresh(tenant, -1);
    if (terms != null) {
      terms.await();
    }
    // The queries' vectors (the model's) lie far from every cluster, where the nearest chunks are
    // nearly as similar as the next ones: the hardest case for an approximate index, in which both
    // HNSW graphs (built in a random order here) may miss one near-tie or another. What matters is
    // how much similarity a miss costs: the copy's top 10 are held to the exact top 10's mean
    // similarity as closely as pgvector's are, within 0.005.
    double copyGap = 0;
    double databaseGap = 0;
    String[] texts = {"chunk 7 of the clustered corpus", "clustered corpus", "chunk 2999", "of the",
        "the corpus of chunks", "a query about nothing in particular"};
    for (String text : texts) {
      float[] vector = SharedEmbedder.get().embedQuery(text);
      double exact = exact(vector, 10, null).stream().mapToDouble(id -> cosine(vector, vectors.get(id))).sum() / 10;
      List<RankedChunk> mine = inMemory.rank(tenant, text, SearchMode.VECTOR, 10).await();
      List<RankedChunk> theirs = inDatabase.rank(tenant, text, SearchMode.VECTOR, 10).await();
      assertThat(mine).hasSize(10);
      assertThat(theirs).hasSize(10);
      copyGap += exact - mine.stream().mapToDouble(RankedChunk::score).sum() / 10;
      databaseGap += exact - theirs.stream().mapToDouble(RankedChunk::score).sum() / 10;
      List<SearchHit> hits = inMemory.search(tenant, new SearchRequest(text, 5, Set.of())).await();
      assertThat(hits).isNotEmpty();
    }
    assertThat(counted(metrics, "memory")).isEqualTo(2.0 * texts.length);
    copyGap /= texts.length;
    databaseGap /= texts.length;
    System.out.printf("mean top-10 similarity below the exact, far queries: copy %.5f, pgvector %.5f%n",
        copyGap, databaseGap);
    assertThat(copyGap).as("similarity the copy's misses cost").isLessThanOrEqualTo(Math.max(databaseGap, 0) + 0.005);
  }

  @Test
  @DisplayName("every write to a tenant's chunks moves its version, even one without terms; a stale copy is not used")
  void staleCopyIsNotUsed() throws Exception {
    UUID other;
    UUID chunk;
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      other = corpus.tenant("vectors-write");
      corpus.doc(other, "First").text("basalt columns cool slowly").insert();
    }
    QuarryMetrics metrics = new QuarryMetrics();
    SearchService search = service(64, metrics);
    VectorIndex first = built(search.vectorIndexes(), other);
    assertThat(first.chunks()).isEqualTo(1);
    assertThat(first.version).isEqualTo(version(other));
    search.rank(other, "basalt", SearchMode.VECTOR, 10).await();
    // The query's version is read only once a copy exists; that search then ranks in memory.
    assertThat(counted(metrics, "memory")).isEqualTo(1);

    // A chunk without a single term (to_tsvector finds no word in it) still moves the version.
    long beforeWrite = version(other);
    try (Connection c = db.jdbc()) {
      new Corpus(c, SharedEmbedder.get()).doc(other, "Dashes").text("— — —").insert();
      try (PreparedStatement s = c.prepareStatement(
          "SELECT count(*) FROM chunk_terms t JOIN chunks k ON k.id = t.chunk_id"
              + " JOIN documents d ON d.id = k.document_id WHERE d.tenant_id = ? AND d.title = 'Dashes'")) {
        s.setObject(1, other);
        try (ResultSet r = s.executeQuery()) {
          r.next();
          assertThat(r.getLong(1)).as("postings of the dashes").isZero();
        }
      }
      try (PreparedStatement s = c.prepareStatement("SELECT id FROM chunks WHERE tenant_id = ? AND content LIKE '%—%'")) {
        s.setObject(1, other);
        try (ResultSet r = s.executeQuery()) {
          assertThat(r.next()).isTrue();
          chunk = (UUID) r.getObject(1);
        }
      }
    }
    long afterWrite = version(other);
    assertThat(afterWrite).isNotEqualTo(beforeWrite);
    List<RankedChunk> stale = search.rank(other, "basalt", SearchMode.VECTOR, 10).await();
    assertThat(stale).extracting(RankedChunk::chunkId).contains(chunk);
    assertThat(counted(metrics, "database")).as("the stale copy was not used").isEqualTo(1);

    VectorIndex second = built(search.vectorIndexes(), other);
    assertThat(second.chunks()).isEqualTo(2);
    assertThat(search.rank(other, "basalt", SearchMode.VECTOR, 10).await()).extracting(RankedChunk::chunkId)
        .containsExactlyInAnyOrderElementsOf(stale.stream().map(RankedChunk::chunkId).toList());
    assertThat(counted(metrics, "memory")).isEqualTo(2);

    // Re-embedding (an update of the vector alone) moves it too.
    try (Connection c = db.jdbc();
        PreparedStatement s = c.prepareStatement("UPDATE chunks SET embedding = embedding WHERE id = ?")) {
      s.setObject(1, chunk);
      assertThat(s.executeUpdate()).isEqualTo(1);
    }
    assertThat(version(other)).isNotEqualTo(afterWrite);
    search.rank(other, "basalt", SearchMode.VECTOR, 10).await();
    assertThat(counted(metrics, "database")).isEqualTo(2);
  }

  @Test
  @DisplayName("a tenant's copy holds its own chunks only")
  void tenantsApart() throws Exception {
    UUID alone;
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      alone = corpus.tenant("vectors-alone");
      corpus.doc(alone, "Only").text("an obsidian flake").insert();
    }
    VectorIndex copy = built(service(64, new QuarryMetrics()).vectorIndexes(), alone);
    assertThat(copy.chunks()).isEqualTo(1);
    for (float[] query : queries.subList(0, 10)) {
      assertThat(copy.nearest(query, 100, null)).hasSize(1)
          .allSatisfy(h -> assertThat(vectors).doesNotContainKey(h.chunkId()));
    }
  }

  @Test
  @DisplayName("a copy whose build would need more than the whole budget is not made, though the copy itself would fit in half")
  void peakWithinBudget() {
    long estimate = VectorIndex.estimateBytes(CHUNKS, dims, documents.size());
    long peak = VectorIndex.peakBytes(CHUNKS, dims, documents.size());
    assertThat(peak).isGreaterThan(2 * estimate);
    TenantCopies tight = new TenantCopies(pool, 2 * estimate + 1, clock::get);
    VectorIndexes indexes = new VectorIndexes(tight, SharedEmbedder.get().modelName(), dims);
    clock.addAndGet(3_600_000_000_000L);
    indexes.refresh(tenant, -1).await();
    assertThat(indexes.current(tenant)).isNull();
    assertThat(tight.bytes()).isZero();
    TenantCopies enough = new TenantCopies(pool, peak, clock::get);
    VectorIndexes fits = new VectorIndexes(enough, SharedEmbedder.get().modelName(), dims);
    VectorIndex copy = built(fits, tenant);
    assertThat(copy).isNotNull();
    assertThat(enough.bytes()).isEqualTo(copy.bytes()).isLessThanOrEqualTo(estimate);
  }

  @Test
  @DisplayName("vectors of zero length or with a non-finite component are left out; a zero query finds nothing")
  void noCosineNoHit() {
    VectorIndex.Builder builder = new VectorIndex.Builder(1, 3);
    UUID doc = UUID.randomUUID();
    UUID good = UUID.randomUUID();
    builder.chunk(UUID.randomUUID(), doc, new float[] {0, 0, 0});
    builder.chunk(UUID.randomUUID(), doc, new float[] {1, Float.NaN, 0});
    builder.chunk(UUID.randomUUID(), doc, new float[] {Float.POSITIVE_INFINITY, 0, 0});
    builder.chunk(good, doc, new float[] {3, 4, 0});
    VectorIndex copy = builder.build();
    assertThat(copy.chunks()).isEqualTo(1);
    List<RankedChunk> hits = copy.nearest(new float[] {0, 1, 0}, 5, null);
    assertThat(hits).singleElement().satisfies(h -> {
      assertThat(h.chunkId()).isEqualTo(good);
      assertThat(h.score()).isCloseTo(0.8, org.assertj.core.data.Offset.offset(1e-6));
    });
    assertThat(copy.nearest(new float[] {0, 0, 0}, 5, null)).isEmpty();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> copy.nearest(new float[] {1, 0}, 5, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dimensions");
    assertThat(new VectorIndex.Builder(1, 3).build().nearest(new float[] {1, 0, 0}, 5, null)).isEmpty();
  }

  @Test
  @DisplayName("the graph is made a step at a time, each step adding vectors for as long as it is given"
      + " (at least one); the copy made so finds every chunk by its own vector")
  void madeInSteps() {
    int n = 300;
    java.util.Random random = new java.util.Random(5);
    VectorIndex.Builder builder = new VectorIndex.Builder(1, 8);
    UUID[] ids = new UUID[n];
    float[][] vectors = new float[n][8];
    for (int i = 0; i < n; i++) {
      ids[i] = UUID.randomUUID();
      for (int d = 0; d < 8; d++) {
        vectors[i][d] = (float) random.nextGaussian();
      }
      builder.chunk(ids[i], UUID.randomUUID(), vectors[i]);
    }
    int steps = 1;
    VectorIndex copy;
    while ((copy = builder.step(0)) == null) {
      steps++;
    }
    assertThat(steps).as("open, one vector a step, finish").isEqualTo(n + 2);
    assertThat(copy.chunks()).isEqualTo(n);
    int found = 0;
    for (int i = 0; i < n; i++) {
      List<RankedChunk> hit = copy.nearest(vectors[i], 1, null);
      if (!hit.isEmpty() && hit.get(0).chunkId().equals(ids[i])) {
        found++;
      }
    }
    assertThat(found).isEqualTo(n);
  }
}
