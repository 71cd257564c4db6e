package dev.quarry.search;

import dev.quarry.config.Config;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.store.Database;
import dev.quarry.search.ContextExpander.Item;
import dev.quarry.search.ContextExpander.RankedHit;
import dev.quarry.search.Fusion.Scored;
import dev.quarry.search.SearchSql.Param;
import dev.quarry.search.SearchSql.Statement;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hybrid retrieval (vector + BM25 full-text, fused by {@link Fusion#DEFAULT}) with context
 * expansion. Both sides search with {@link SearchQuery#of} the caller's query: without the
 * instructions addressed to whoever answers it, and with the line items of a financial metric it
 * names.
 *
 * <p>A search is three statements, each in a short read-only transaction of its own on whichever
 * pooled connection is free. The full-text ranking starts at once; the vector ranking starts as
 * soon as the query's vector exists (kept from a recent search, or embedded on a worker
 * meanwhile), so the database runs the two side by side; the two rankings are fused here, and
 * context expansion takes the fused one. No connection is held while the model runs or while
 * another statement does.
 */
public final class SearchService {
  private static final Logger LOG = LoggerFactory.getLogger(SearchService.class);
  /**
   * How often a gateway looks whether the tenants it keeps search copies of still exist: another
   * replica may have deleted one ({@link #watchTenants}).
   */
  public static final Duration TENANT_CHECK = Duration.ofSeconds(5);
  /**
   * Candidates taken from each retriever before fusion: the lists whose scores are normalised, deep
   * enough that a chunk one retriever ranks well and the other ranks 80th still has both scores.
   */
  static final int CANDIDATES = 100;

  /**
   * Postings that full-text scoring reads in full. Query terms are taken rarest first while their
   * document frequencies add up to this; the remaining (common, low-idf) terms are only looked up
   * for the best {@link #POOL_FACTOR} x candidates of the rare ones, instead of being summed over
   * every chunk that holds them (at 100k chunks a common term has 15-30k postings). When all of a
   * query's postings fit, the ranking is exact BM25. The rarest term is always read in full.
   */
  static final int POSTING_BUDGET = 10_000;

  /**
   * The most distinct terms of a query that full-text scoring takes, rarest first. A short query
   * has far fewer; a pasted paragraph has hundreds, whose commonest add little to the ranking but a
   * posting lookup each for every pooled chunk (Lucene's MoreLikeThis, which turns a passage into a
   * query, keeps 25). BENCHMARKS.md, "Long queries".
   */
  public static final int QUERY_TERMS = 64;

  /** How many of the rare terms' best chunks get the common terms added, per candidate wanted. */
  static final int POOL_FACTOR = 3;

  /**
   * How deep, in multiples of the limit, the fused ranking is kept for filling in when hits merge
   * (BENCHMARKS.md, "Filings: session 12"): only the first few beyond the limit are expanded at
   * once; the rest only when merging left fewer results than asked.
   */
  static final int SPARES = 3;

  /** Recent query vectors kept; at 384 floats each, 1024 of them take about 1.6 MB. */
  static final int QUERY_VECTORS_CACHED = 1024;

  private final Vertx vertx;
  private final Pool pool;
  private final Embedder embedder;
  private final Config config;
  private final SearchSql sql;
  private final ContextExpander expander;
  private final Fusion fusion = Fusion.DEFAULT;
  private final int postingBudget;
  private final QueryVectorCache queryVectors = new QueryVectorCache(QUERY_VECTORS_CACHED);
  private final QuarryMetrics metrics;
  private final TermIndexes termIndexes;
  private final VectorIndexes vectorIndexes;
  private final ContextIndexes contextIndexes;
  private final TenantLines lines;

  public SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config) {
    this(vertx, pool, embedder, config, POSTING_BUDGET, new QuarryMetrics());
  }

  public SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config, QuarryMetrics metrics) {
    this(vertx, pool, embedder, config, POSTING_BUDGET, metrics);
  }

  /** With another posting budget: tests use a small one to exercise the pruned path. */
  SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config, int postingBudget) {
    this(vertx, pool, embedder, config, postingBudget, new QuarryMetrics());
  }

  private SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config, int postingBudget,
      QuarryMetrics metrics) {
    this(vertx, pool, embedder, config, postingBudget, metrics,
        new TenantCopies(pool, config.searchMemoryMb() * 1024L * 1024L, System::nanoTime));
  }

  /** With search copies kept as a test arranges them (their own budget and clock). */
  SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config, int postingBudget,
      QuarryMetrics metrics, TenantCopies copies) {
    this(vertx, pool, embedder, config, postingBudget, metrics, new TermIndexes(copies),
        new VectorIndexes(copies, embedder.modelName(), embedder.dimensions()), new ContextIndexes(copies));
  }

  /** With copies of postings kept as a test arranges them, and vectors always from the database. */
  SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config, int postingBudget,
      QuarryMetrics metrics, TermIndexes termIndexes) {
    this(vertx, pool, embedder, config, postingBudget, metrics, termIndexes,
        new VectorIndexes(new TenantCopies(pool, 0, System::nanoTime), embedder.modelName(),
            embedder.dimensions()), new ContextIndexes(new TenantCopies(pool, 0, System::nanoTime)));
  }

  private SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config, int postingBudget,
      QuarryMetrics metrics, TermIndexes termIndexes, VectorIndexes vectorIndexes,
      ContextIndexes contextIndexes) {
    this.metrics = metrics;
    if (postingBudget < 0) {
      throw new IllegalArgumentException("posting budget must be >= 0, got " + postingBudget);
    }
    this.postingBudget = postingBudget;
    this.vertx = vertx;
    this.pool = pool;
    this.embedder = embedder;
    this.config = config;
    this.lines = new TenantLines(config.searchTenantLimit());
    this.sql = new SearchSql(embedder.modelName(), embedder.dimensions());
    this.expander = new ContextExpander(config.contextBudgetChars());
    this.termIndexes = termIndexes;
    this.vectorIndexes = vectorIndexes;
    this.contextIndexes = contextIndexes;
    metrics.termIndexBytes(termIndexes::bytes);
    metrics.copyBuilds(termIndexes::builds);
  }

  /** The copies of tenants' postings this service ranks with: tests build and inspect them. */
  TermIndexes termIndexes() {
    return termIndexes;
  }

  /** The copies of tenants' vectors this service ranks with: tests build and inspect them. */
  VectorIndexes vectorIndexes() {
    return vectorIndexes;
  }

  /** The copies of tenants' hit contexts this service expands with: tests build and inspect them. */
  ContextIndexes contextIndexes() {
    return contextIndexes;
  }

  /**
   * Ensures the HNSW index for this embedder's model exists, through a pool of the tables' owner
   * (the app role may not create indexes); call once at start-up, before
   * traffic (on a large table the first build takes a while and blocks writes to chunks).
   */
  public Future<Void> prepare(Pool ownerPool) {
    return ownerPool.query(sql.createVectorIndex).execute().mapEmpty();
  }

  /**
   * Forgets what this gateway keeps of a deleted tenant: its search copies (their bytes go back to
   * the budget at once, or when a build under way ends) and its cached query vectors. Call after its
   * rows are deleted.
   */
  public void forgetTenant(UUID tenantId) {
    termIndexes.forget(tenantId);
    vectorIndexes.forget(tenantId);
    contextIndexes.forget(tenantId);
    queryVectors.forget(tenantId);
  }

  /**
   * Every {@code every}, asks {@code existing} which of the tenants this gateway keeps search copies
   * of still exist, and forgets the others ({@link #forgetTenant}): a tenant deleted through another
   * replica, which no search here will ever ask for again, so only eviction would have dropped its
   * copies. Returns the timer, for the caller to cancel.
   */
  public long watchTenants(Function<Set<UUID>, Future<Set<UUID>>> existing, Duration every) {
    return vertx.setPeriodic(every.toMillis(), id -> {
      Set<UUID> here = new HashSet<>(termIndexes.tenants());
      here.addAll(vectorIndexes.tenants());
      here.addAll(contextIndexes.tenants());
      if (here.isEmpty()) {
        return;
      }
      existing.apply(here).onSuccess(live -> {
        for (UUID tenant : here) {
          if (!live.contains(tenant)) {
            LOG.info("tenant {} no longer exists (deleted through another gateway): forgetting its search copies here",
                tenant);
            forgetTenant(tenant);
          }
        }
      }).onFailure(e -> LOG.debug("checking the tenants of this gateway's search copies: {}", e.toString()));
    });
  }

  /**
   * Fails with IllegalArgumentException (message names the problem) for a bad query or limit. A
   * tenant's searches take turns in its own line ({@link TenantLines}, {@link Config#searchTenantLimit}
   * at once), so that one tenant's burst never has the event loops to itself; the time in line counts
   * in the search's duration.
   */
  public Future<List<SearchHit>> search(UUID tenantId, SearchRequest request) {
    long started = System.nanoTime();
    return lines.run(tenantId, () -> searchUnmeasured(tenantId, request)).andThen(done -> {
      long nanos = System.nanoTime() - started;
      if (done.succeeded()) {
        metrics.searched(done.result().size(), nanos);
      } else {
        metrics.searchFailed(nanos);
      }
    });
  }

  private Future<List<SearchHit>> searchUnmeasured(UUID tenantId, SearchRequest request) {
    try {
      if (request == null) {
        throw new IllegalArgumentException("search request must not be null");
      }
      validate(tenantId, request.query(), request.limit());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    int limit = request.limit();
    // A few more than asked, since hits whose contexts overlap merge into one result.
    int fused = limit + Math.max(5, limit / 2);
    // NULL, not an empty array, for "everything": the SQL tests it once instead of per row.
    UUID[] scope = request.documentIds().isEmpty() ? null
        : request.documentIds().toArray(UUID[]::new);
    SearchQuery query = SearchQuery.of(request.query());
    Args args = new Args(tenantId, query.fullText(), null, scope, candidates(fused), null);
    Future<QueryTerms> terms = queryTerms(args);
    Future<List<Scored<UUID>>> ranked = fullText(args, terms, false).map(SearchService::scoredChunks);
    Future<List<Scored<UUID>>> nearest = embed(tenantId, query.embedded())
        .compose(vector -> nearest(args.withVector(vector), terms, false))
        .map(SearchService::scoredChunks);
    Future<List<Scored<UUID>>> order = Future.all(ranked, nearest, terms).map(both -> fusion.fuse(
        ranked.result(), nearest.result(), Math.max(fused, SPARES * limit), args.candidates()));
    return order.compose(all -> {
      int first = Math.min(fused, all.size());
      QueryTerms q = terms.result();
      return expanded(args, q, all.subList(0, first)).compose(hits -> {
        List<SearchHit> results = expander.expand(hits, limit);
        if (results.size() >= limit || first == all.size()) {
          return Future.succeededFuture(results);
        }
        // Hits merged (overlapping contexts, one page) and left fewer results than asked: the
        // next ones in the fused order fill in, at the cost of one more statement.
        return expanded(args, q, all.subList(first, all.size())).map(more -> {
          List<RankedHit> combined = new ArrayList<>(hits);
          combined.addAll(more);
          return expander.expand(combined, limit);
        });
      });
    });
  }

  /**
   * The hits of part of a fused ranking, with the items their contexts are drawn from: from the
   * gateway's copy of the tenant's hit contexts when it has the version this search read, else
   * from the database (and a fresh copy is asked for). Both give the same hits
   * ({@link ContextIndex}).
   */
  private Future<List<RankedHit>> expanded(Args args, QueryTerms q, List<Scored<UUID>> part) {
    ContextIndex held = q == null ? null : contextIndexes.at(args.tenantId(), q.version());
    if (held != null) {
      metrics.contextsExpanded("memory");
      return Future.succeededFuture(held.hits(part, config.contextBudgetChars()));
    }
    metrics.contextsExpanded("database");
    return statement(sql.fusedExpanded, args.withFused(part)).map(result -> {
      List<RankedHit> hits = new ArrayList<>(result.size());
      for (Row row : result) {
        hits.add(rankedHit(row));
      }
      return hits;
    });
  }

  /**
   * The chunk ranking of one mode, without context expansion: for measuring retrieval quality per
   * mode. Same validation as {@link #search}.
   */
  public Future<List<RankedChunk>> rank(UUID tenantId, String query, SearchMode mode, int limit) {
    try {
      validate(tenantId, query, limit);
      if (mode == null) {
        throw new IllegalArgumentException("search mode must not be null");
      }
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    SearchQuery searched = SearchQuery.of(query);
    if (mode != SearchMode.HYBRID) {
      Args args = new Args(tenantId, searched.fullText(), null, null, limit, null);
      Future<QueryTerms> terms = queryTerms(args);
      return mode == SearchMode.FULL_TEXT ? fullText(args, terms, true)
          : embed(tenantId, searched.embedded()).compose(v -> nearest(args.withVector(v), terms, true));
    }
    // Both sides as search takes them, fused the same way.
    Args args = new Args(tenantId, searched.fullText(), null, null, candidates(limit), null);
    Future<QueryTerms> terms = queryTerms(args);
    Future<List<RankedChunk>> ranked = fullText(args, terms, true);
    Future<List<RankedChunk>> nearest = embed(tenantId, searched.embedded())
        .compose(v -> nearest(args.withVector(v), terms, true));
    return Future.all(ranked, nearest).map(both -> {
      Map<UUID, UUID> documents = new HashMap<>();
      List<Scored<UUID>> text = new ArrayList<>();
      List<Scored<UUID>> vec = new ArrayList<>();
      for (RankedChunk c : ranked.result()) {
        documents.put(c.chunkId(), c.documentId());
        text.add(new Scored<>(c.chunkId(), c.score()));
      }
      for (RankedChunk c : nearest.result()) {
        documents.put(c.chunkId(), c.documentId());
        vec.add(new Scored<>(c.chunkId(), c.score()));
      }
      List<RankedChunk> out = new ArrayList<>();
      for (Scored<UUID> s : fusion.fuse(text, vec, limit, args.candidates())) {
        out.add(new RankedChunk(s.id(), documents.get(s.id()), s.score()));
      }
      return out;
    });
  }

  /**
   * What the search copies need from the database for one query: the tenant's current version
   * ({@code term_version}; -1 when the tenant has no statistics, so no chunks) and the query's terms
   * with their idf, as the full-text statement would choose them. Null when the tenant has no copy
   * that could use them (and those copies are asked for, so a later search has them).
   */
  private record QueryTerms(long version, double avgdl, List<TermIndex.Term> terms) {}

  private Future<QueryTerms> queryTerms(Args args) {
    UUID tenant = args.tenantId();
    // Each asked on its own (no short cut): every kind the tenant lacks is asked for.
    boolean postings = termIndexes.heldOrAsked(tenant);
    boolean vectors = vectorIndexes.heldOrAsked(tenant);
    boolean contexts = contextIndexes.heldOrAsked(tenant);
    if (!postings && !vectors && !contexts) {
      return Future.succeededFuture(null);
    }
    return statement(sql.queryTerms, args).map(rows -> {
      List<TermIndex.Term> terms = new ArrayList<>();
      long version = -1;
      double avgdl = 1;
      for (Row row : rows) {
        version = row.getLong("term_version");
        avgdl = row.getDouble("avgdl");
        if (row.getString("term") != null) {
          terms.add(new TermIndex.Term(row.getString("term"), row.getDouble("idf"), row.getBoolean("essential")));
        }
      }
      return new QueryTerms(version, avgdl, terms);
    });
  }

  /**
   * The full-text ranking of {@code args.candidates()} chunks: from the gateway's copy of the
   * tenant's postings when it has the version the database reports with the query's terms, else
   * from the database (and a fresh copy is asked for). Both rank the same way ({@link TermIndex}).
   * Document ids are filled in when {@code withDocuments}; otherwise they may be null.
   */
  private Future<List<RankedChunk>> fullText(Args args, Future<QueryTerms> queryTerms,
      boolean withDocuments) {
    Statement inDatabase = withDocuments ? sql.fullText : sql.fullTextIds;
    if (!termIndexes.enabled()) {
      metrics.fullTextRanked("database");
      return fromDatabase(inDatabase, args, withDocuments);
    }
    UUID tenant = args.tenantId();
    return queryTerms.compose(q -> {
      if (q != null && (q.version() < 0 || q.terms().isEmpty())) {
        return Future.succeededFuture(List.of()); // no chunks, or no word of the query indexed
      }
      TermIndex held = q == null ? null : termIndexes.at(tenant, q.version());
      if (held == null) {
        metrics.fullTextRanked("database");
        return fromDatabase(inDatabase, args, withDocuments);
      }
      metrics.fullTextRanked("memory");
      return Future.succeededFuture(held.rank(q.terms(), q.avgdl(), args.candidates() * POOL_FACTOR,
          args.candidates(), args.scope()));
    });
  }

  /**
   * The vector ranking of {@code args.candidates()} chunks nearest {@code args.vector()}: from the
   * gateway's copy of the tenant's vectors when it has the version the database reported for this
   * query, else from the database's HNSW index (and a fresh copy is asked for). Both are
   * approximate nearest neighbours by cosine similarity, with the same scores. Document ids are
   * filled in when {@code withDocuments}; otherwise they may be null.
   */
  private Future<List<RankedChunk>> nearest(Args args, Future<QueryTerms> queryTerms,
      boolean withDocuments) {
    Statement inDatabase = withDocuments ? sql.vector : sql.vectorIds;
    if (!vectorIndexes.enabled()) {
      metrics.vectorRanked("database");
      return fromDatabase(inDatabase, args, withDocuments);
    }
    UUID tenant = args.tenantId();
    return queryTerms.compose(q -> {
      VectorIndex held = q == null ? null : vectorIndexes.at(tenant, q.version());
      if (held == null) {
        metrics.vectorRanked("database");
        return fromDatabase(inDatabase, args, withDocuments);
      }
      metrics.vectorRanked("memory");
      return Future.succeededFuture(held.nearest(args.vector(), args.candidates(), args.scope()));
    });
  }

  /** A ranking statement's rows: chunk id, then document id when {@code withDocuments}, then score. */
  private Future<List<RankedChunk>> fromDatabase(Statement statement, Args args, boolean withDocuments) {
    return statement(statement, args).map(rows -> {
      if (withDocuments) {
        return ranked(rows);
      }
      List<RankedChunk> out = new ArrayList<>(rows.size());
      for (Row row : rows) {
        out.add(new RankedChunk(row.getUUID(0), null, row.getDouble(1)));
      }
      return out;
    });
  }

  private static List<Scored<UUID>> scoredChunks(List<RankedChunk> ranked) {
    List<Scored<UUID>> out = new ArrayList<>(ranked.size());
    for (RankedChunk r : ranked) {
      out.add(new Scored<>(r.chunkId(), r.score()));
    }
    return out;
  }

  private static List<RankedChunk> ranked(RowSet<Row> rows) {
    List<RankedChunk> out = new ArrayList<>(rows.size());
    for (Row row : rows) {
      out.add(new RankedChunk(row.getUUID("chunk_id"), row.getUUID("document_id"), row.getDouble("score")));
    }
    return out;
  }

  private void validate(UUID tenantId, String query, int limit) {
    if (tenantId == null) {
      throw new IllegalArgumentException("tenant id must not be null");
    }
    QueryRules.of(config).check(query, limit).ifPresent(p -> {
      throw new IllegalArgumentException(p.message());
    });
  }

  private static int candidates(int wanted) {
    return Math.max(CANDIDATES, wanted);
  }

  private Future<float[]> embed(UUID tenantId, String query) {
    float[] cached = queryVectors.peek(tenantId, query);
    if (cached != null) {
      return Future.succeededFuture(cached);
    }
    // The embedder blocks (ONNX or HTTP); unordered so concurrent searches embed in parallel.
    return vertx.executeBlocking(() -> queryVectors.get(tenantId, query, embedder::embedQuery), false);
  }

  /** Everything a statement may bind; each statement takes the ones it names. */
  private record Args(UUID tenantId, String query, float[] vector, UUID[] scope, int candidates,
      List<Scored<UUID>> fused) {
    Args withVector(float[] v) {
      return new Args(tenantId, query, v, scope, candidates, fused);
    }

    Args withFused(List<Scored<UUID>> ranking) {
      return new Args(tenantId, query, vector, scope, candidates, ranking);
    }
  }

  private Future<RowSet<Row>> run(SqlConnection conn, Statement statement, Args args) {
    Tuple tuple = Tuple.tuple();
    for (Param p : statement.params()) {
      switch (p) {
        case TENANT -> tuple.addUUID(args.tenantId());
        case QUERY -> tuple.addString(args.query());
        case VECTOR -> tuple.addString(vectorLiteral(args.vector()));
        case SCOPE -> tuple.addValue(args.scope());
        case POSTINGS -> tuple.addInteger(postingBudget);
        case TERMS -> tuple.addInteger(QUERY_TERMS);
        case POOL -> tuple.addInteger(args.candidates() * POOL_FACTOR);
        case CANDIDATES -> tuple.addInteger(args.candidates());
        case BUDGET -> tuple.addInteger(config.contextBudgetChars());
        case IDS -> tuple.addArrayOfUUID(args.fused().stream().map(Scored::id).toArray(UUID[]::new));
        case SCORES -> tuple.addArrayOfDouble(args.fused().stream().map(Scored::score).toArray(Double[]::new));
      }
    }
    return conn.preparedQuery(statement.sql()).execute(tuple);
  }

  /**
   * One statement in a read-only transaction of its own, which sets the HNSW scan for filtered
   * search: iterative scans keep walking the graph until enough rows pass the tenant and scope
   * filters, instead of returning fewer than asked. BEGIN goes out with the statement (pipelined on
   * the one connection). The rows are handed on as soon as they arrive; the COMMIT (nothing to
   * write) follows on its own, and the connection goes back to the pool after it, on every path.
   */
  private Future<RowSet<Row>> statement(Statement statement, Args args) {
    return pool.getConnection().compose(conn -> {
      Future<?> begin = conn.query(begin(args, statement.genericPlan())).execute();
      Future<RowSet<Row>> rows = run(conn, statement, args);
      Future<RowSet<Row>> done = Future.all(begin, rows).transform(all -> all.succeeded()
          ? Future.succeededFuture(rows.result())
          : Future.failedFuture(begin.failed() ? begin.cause() : rows.cause()));
      done.onComplete(result -> conn.query(result.succeeded() ? "COMMIT" : "ROLLBACK").execute()
          .onComplete(ended -> conn.close()));
      return done;
    });
  }

  private static String begin(Args args, boolean genericPlan) {
    // hnsw.ef_search bounds what one scan pass returns; pgvector allows 1..1000.
    int efSearch = Math.min(1000, Math.max(40, args.candidates()));
    // jit off: the plan's cost estimate grows with the corpus past jit_above_cost, and compiling
    // the expressions then takes longer (tens of ms) than running the whole statement.
    // Custom plans for the ranking statements: they are cached prepared statements, and a generic
    // plan (planned without the query's terms and limits) scans and aggregates whole posting lists
    // in parallel: seconds per search at 100k chunks, against about 2 ms of planning saved. A
    // statement whose plan cannot depend on its arguments is planned once instead.
    // The tenant rides in the same round trip: row-level security then holds the statement to it.
    return "BEGIN READ ONLY; " + Database.setTenant(args.tenantId()) + "; "
        + "SET LOCAL hnsw.iterative_scan = relaxed_order; "
        + "SET LOCAL hnsw.ef_search = " + efSearch + "; SET LOCAL jit = off; "
        + "SET LOCAL plan_cache_mode = " + (genericPlan ? "force_generic_plan" : "force_custom_plan");
  }

  private static String vectorLiteral(float[] v) {
    StringBuilder b = new StringBuilder(v.length * 12).append('[');
    for (int i = 0; i < v.length; i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append(v[i]);
    }
    return b.append(']').toString();
  }

  private static RankedHit rankedHit(Row row) {
    JsonArray itemRows = (JsonArray) row.getValue("items");
    List<Item> items = new ArrayList<>();
    if (itemRows != null) {
      for (int i = 0; i < itemRows.size(); i++) {
        JsonArray it = itemRows.getJsonArray(i);
        JsonArray pages = it.getJsonArray(4);
        List<Integer> pageNumbers = new ArrayList<>(pages.size());
        for (int p = 0; p < pages.size(); p++) {
          pageNumbers.add(pages.getInteger(p));
        }
        items.add(new Item(it.getInteger(0), it.getString(1), it.getString(2), it.getString(3),
            List.copyOf(pageNumbers)));
      }
    }
    Integer sectionCost = row.getInteger("section_cost");
    return new RankedHit(
        row.getUUID("chunk_id"),
        row.getDouble("score"),
        row.getUUID("document_id"),
        row.getString("title"),
        row.getString("uri"),
        row.getInteger("item_start"),
        row.getInteger("item_end"),
        List.of(row.getArrayOfStrings("headings")),
        row.getString("content"),
        List.of(row.getArrayOfIntegers("page_numbers")),
        List.of(row.getArrayOfStrings("doc_item_refs")),
        List.of(row.getArrayOfStrings("labels")),
        sectionCost == null ? 0 : sectionCost,
        List.copyOf(items));
  }
}
