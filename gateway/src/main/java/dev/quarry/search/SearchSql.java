package dev.quarry.search;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every SQL statement of search, by name, built once for one embedding model.
 *
 * <p>The vector part must repeat the HNSW index's expression ({@code embedding::vector(dims)}) and
 * its predicate ({@code embedding_model = '...'}) literally, or the planner won't use the index; so
 * the model name and dimensions are validated and written into the text. Everything that comes from
 * a caller (tenant, query, vector, scope, limits) stays a bind parameter.
 *
 * <p>Parameters are written by name ({@code :tenant}) and numbered per statement, since PostgreSQL
 * rejects a statement that leaves a parameter number unused; see {@link Param}.
 */
final class SearchSql {
  /** BM25 term-frequency saturation. */
  static final double K1 = 1.2;
  /** BM25 length normalisation. */
  static final double B = 0.75;
  /** Items that repeat on pages or hang off them; they never fill the context budget. */
  static final String FURNITURE = "('page_header', 'page_footer', 'footnote')";

  private static final Pattern MODEL_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}");

  private static final Pattern PLACEHOLDER = Pattern.compile("(?<!:):([a-z]+)");

  /** A statement's bind parameters, by name. */
  enum Param {
    TENANT, QUERY, VECTOR, SCOPE, POSTINGS, POOL, CANDIDATES, BUDGET,
    /** The most distinct query terms scored: the rarest ones. */
    TERMS,
    /** The fused ranking computed beforehand ({@link Fusion}): chunk ids, best first. */
    IDS,
    /** Their fused scores, in the same order. */
    SCORES
  }

  /** SQL text with $n placeholders, and what each $n stands for. */
  /**
   * A statement with its parameters in order; {@code genericPlan} when one plan suits every call
   * (the statement's work does not depend on how common the query's terms are), so PostgreSQL may
   * plan it once per connection instead of for every call.
   */
  record Statement(String sql, List<Param> params, boolean genericPlan) {
    Statement(String sql, List<Param> params) {
      this(sql, params, false);
    }

    Statement plannedOnce() {
      return new Statement(sql, params, true);
    }
  }

  final String createVectorIndex;
  final Statement fullText;
  final Statement vector;
  /** The full-text ranking: chunk ids and BM25 scores, best first. */
  final Statement fullTextIds;
  /**
   * What the full-text ranking takes from the database before it reads a posting: the tenant's
   * term_version and average chunk length, then the query's terms as that ranking chooses them
   * (rarest first, with idf and whether each is essential); one row with null terms when none is
   * held, no row when the tenant has no chunks. {@link TermIndex} ranks with these.
   */
  final Statement queryTerms;
  /** The vector ranking: chunk ids and cosine similarities, nearest first. */
  final Statement vectorIds;
  /**
   * The hits of a fused ranking computed beforehand ({@link Param#IDS}, {@link Param#SCORES}),
   * with the items their context is drawn from.
   */
  final Statement fusedExpanded;

  SearchSql(String modelName, int dimensions) {
    if (modelName == null || !MODEL_NAME.matcher(modelName).matches()) {
      throw new IllegalArgumentException("embedding model name " + modelName
          + " must match " + MODEL_NAME.pattern() + " (it is written into the index definition)");
    }
    if (dimensions < 1 || dimensions > 2000) {
      throw new IllegalArgumentException("embedding dimensions " + dimensions
          + " must be within [1, 2000] (the HNSW limit for vector)");
    }
    String vectorExpr = "(c.embedding::vector(" + dimensions + "))";
    String modelPredicate = "c.embedding_model = '" + modelName + "'";

    createVectorIndex = "CREATE INDEX IF NOT EXISTS " + indexName(modelName, dimensions)
        + " ON chunks USING hnsw ((embedding::vector(" + dimensions + ")) vector_cosine_ops)"
        + " WHERE embedding_model = '" + modelName + "'";

    String scope = "(:scope::uuid[] IS NULL OR %s = ANY(:scope::uuid[]))";

    String terms = """
        stats AS (
          SELECT chunk_count::float8 AS n,
                 greatest(total_tokens::float8 / greatest(chunk_count, 1), 1.0) AS avgdl,
                 term_version
          FROM corpus_stats WHERE tenant_id = :tenant
        ),
        query_terms AS (
          SELECT DISTINCT lexeme AS term FROM unnest(to_tsvector('english', :query::text))
        ),
        term_idf AS (
          SELECT q.term, d.df::float8 AS df, ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5)) AS idf
          FROM query_terms q
          CROSS JOIN stats s
          JOIN term_stats d ON d.tenant_id = :tenant AND d.term = q.term
          WHERE d.df > 0
          ORDER BY d.df, q.term
          LIMIT :terms
        ),
        term_role AS (
          SELECT i.*,
                 sum(i.df) OVER (ORDER BY i.df, i.term) <= :postings
                   OR row_number() OVER (ORDER BY i.df, i.term) = 1 AS essential
          FROM term_idf i
        )""";
    String bm25 = terms + ",\n" + """
        essential AS (
          SELECT t.chunk_id, sum(%BM25%) AS score
          FROM term_role i
          JOIN chunk_terms t ON t.tenant_id = :tenant AND t.term = i.term
          CROSS JOIN stats s
          WHERE i.essential AND %SCOPE_T%
          GROUP BY t.chunk_id
          ORDER BY score DESC, t.chunk_id
          LIMIT :pool
        ),
        pool AS (
          SELECT array_agg(chunk_id) AS ids FROM essential
        ),
        rest AS (
          SELECT t.chunk_id, sum(%BM25%) AS score
          FROM term_role i
          CROSS JOIN pool p
          JOIN chunk_terms t
            ON t.tenant_id = :tenant AND t.term = i.term AND t.chunk_id = ANY(p.ids)
          CROSS JOIN stats s
          WHERE NOT i.essential
          GROUP BY t.chunk_id
        ),
        fts AS (
          SELECT e.chunk_id, e.score + coalesce(r.score, 0) AS score
          FROM essential e
          LEFT JOIN rest r ON r.chunk_id = e.chunk_id
          ORDER BY score DESC, e.chunk_id
          LIMIT :candidates
        ),
        fts_ranked AS (
          SELECT chunk_id, score, row_number() OVER (ORDER BY score DESC, chunk_id) AS rank FROM fts
        )""";
    bm25 = bm25.replace("%BM25%", "i.idf * t.tf * (%K1% + 1)"
            + " / (t.tf + %K1% * (1 - %B% + %B% * t.token_count / s.avgdl))")
        .replace("%K1%", Double.toString(K1) + "::float8")
        .replace("%B%", Double.toString(B) + "::float8")
        .replace("%SCOPE_T%", scope.formatted("t.document_id"));

    // MATERIALIZED, then ranked again by distance: with iterative scans in relaxed order the index
    // may return rows slightly out of order.
    String knn = """
        vec AS MATERIALIZED (
          SELECT c.id AS chunk_id, %VEC% <=> :vector::text::vector(%DIMS%) AS distance
          FROM chunks c
          WHERE c.tenant_id = :tenant AND %MODEL% AND %SCOPE_C%
          ORDER BY %VEC% <=> :vector::text::vector(%DIMS%)
          LIMIT :candidates
        ),
        vec_ranked AS (
          SELECT chunk_id, distance, row_number() OVER (ORDER BY distance, chunk_id) AS rank FROM vec
        )"""
        .replace("%SCOPE_C%", scope.formatted("c.document_id"));

    // The tuple shape of the two ranking statements: chunk_id, document_id, score.
    fullText = compile("WITH " + bm25 + """
        \nSELECT f.chunk_id, c.document_id, f.score::float8 AS score
        FROM fts_ranked f JOIN chunks c ON c.id = f.chunk_id
        ORDER BY f.rank""", vectorExpr, modelPredicate, dimensions);
    vector = compile("WITH " + knn + """
        \nSELECT v.chunk_id, c.document_id, (1 - v.distance)::float8 AS score
        FROM vec_ranked v JOIN chunks c ON c.id = v.chunk_id
        ORDER BY v.rank""", vectorExpr, modelPredicate, dimensions);
    queryTerms = compile("WITH " + terms + """
        \nSELECT s.term_version, s.avgdl, r.term, r.idf, r.essential
        FROM stats s LEFT JOIN term_role r ON true
        ORDER BY r.df, r.term""", vectorExpr, modelPredicate, dimensions);
    fullTextIds = compile("WITH " + bm25 + """
        \nSELECT f.chunk_id, f.score::float8 AS score FROM fts_ranked f ORDER BY f.rank""",
        vectorExpr, modelPredicate, dimensions);
    vectorIds = compile("WITH " + knn + """
        \nSELECT v.chunk_id, (1 - v.distance)::float8 AS score FROM vec_ranked v ORDER BY v.rank""",
        vectorExpr, modelPredicate, dimensions);
    // The fused ranking's chunks are within the tenant and the scope (the ranking statements applied
    // them); chunks deleted since drop out at the join with chunks.
    String givenPrefix = """
        WITH fused AS (
          SELECT r.chunk_id, r.score FROM unnest(:ids::uuid[], :scores::float8[]) AS r(chunk_id, score)
        )""";

    // The hits with, for each, the items its context can be drawn from: the whole innermost section
    // (or sections) holding the hit's items when it fits the budget; otherwise the items on each
    // side whose distance from the hit is within the budget. Furniture outside the hit is left out.
    // cost = the item's length plus the "\n\n" that joins it; reach = cost of the items from the
    // hit out to this one, on its side.
    String expansion = """
        ,
        hits AS (
          SELECT f.chunk_id, f.score, c.document_id, d.title, d.uri, c.item_start, c.item_end,
                 c.headings, c.content, c.page_numbers, c.doc_item_refs, c.labels,
                 least(sec.s, c.item_start) AS sec_start, greatest(sec.e, c.item_end) AS sec_end
          FROM fused f
          JOIN chunks c ON c.id = f.chunk_id AND c.tenant_id = :tenant
          JOIN documents d ON d.id = c.document_id
          CROSS JOIN LATERAL (
            SELECT min(i.section_start) AS s, max(i.section_end) AS e FROM items i
            WHERE i.document_id = c.document_id
              AND i.position >= c.item_start AND i.position < c.item_end) sec
        )
        SELECT h.chunk_id, h.score::float8 AS score, h.document_id, h.title, h.uri, h.item_start,
               h.item_end, h.headings, h.content, h.page_numbers, h.doc_item_refs, h.labels,
               ctx.section_cost, ctx.items
        FROM hits h
        CROSS JOIN LATERAL (
          SELECT max(w.section_cost)::int AS section_cost,
                 json_agg(json_build_array(w.position, w.self_ref, w.label, w.text, w.page_numbers)
                          ORDER BY w.position) AS items
          FROM (
            SELECT s.*,
                   sum(s.cost) OVER (PARTITION BY s.side ORDER BY s.distance) AS reach,
                   sum(s.cost) OVER () AS section_cost
            FROM (
              SELECT i.position, i.self_ref, i.label, i.text, i.page_numbers, side.side,
                     abs(i.position - CASE WHEN side.side < 0 THEN h.item_start ELSE h.item_end END)
                       AS distance,
                     CASE WHEN side.side <> 0 AND i.label IN %FURNITURE% THEN 0
                          ELSE length(i.text) + 2 END AS cost
              FROM items i
              CROSS JOIN LATERAL (
                SELECT CASE WHEN i.position < h.item_start THEN -1
                            WHEN i.position >= h.item_end THEN 1 ELSE 0 END AS side) side
              WHERE i.document_id = h.document_id
                AND i.position >= h.sec_start AND i.position < h.sec_end
            ) s
          ) w
          WHERE w.side = 0 OR (w.cost > 0 AND (w.section_cost <= :budget + 2 OR w.reach <= :budget + 2))
        ) ctx
        ORDER BY h.score DESC, h.chunk_id""".replace("%FURNITURE%", FURNITURE);
    // The fused hits' rows and items: primary-key and (document, position) lookups for a few dozen
    // ids, the same plan whatever they are. Planning it each time cost ~0.55 ms of its ~1 ms at
    // 100k chunks (BENCHMARKS.md, "Search latency: what was tried", session 14).
    fusedExpanded = compile(givenPrefix + expansion, vectorExpr, modelPredicate, dimensions).plannedOnce();
  }

  /**
   * Numbers the named parameters in order of first use, then writes in the model-specific parts
   * (after numbering, so nothing in a model name can be taken for a parameter).
   */
  private static Statement compile(String template, String vectorExpr, String modelPredicate,
      int dimensions) {
    List<Param> params = new ArrayList<>();
    Matcher m = PLACEHOLDER.matcher(template);
    StringBuilder sql = new StringBuilder();
    while (m.find()) {
      Param p = Param.valueOf(m.group(1).toUpperCase());
      int index = params.indexOf(p);
      if (index < 0) {
        params.add(p);
        index = params.size() - 1;
      }
      m.appendReplacement(sql, Matcher.quoteReplacement("$" + (index + 1)));
    }
    m.appendTail(sql);
    String text = sql.toString()
        .replace("%VEC%", vectorExpr)
        .replace("%DIMS%", Integer.toString(dimensions))
        .replace("%MODEL%", modelPredicate);
    return new Statement(text, List.copyOf(params));
  }

  /** A stable name within PostgreSQL's 63 characters, distinct per model and dimensions. */
  static String indexName(String modelName, int dimensions) {
    String slug = modelName.toLowerCase().replaceAll("[^a-z0-9]+", "_");
    if (slug.length() > 30) {
      slug = slug.substring(0, 30);
    }
    String hash = Integer.toHexString(modelName.hashCode() & 0x7fffffff);
    return "chunks_hnsw_" + slug + "_" + dimensions + "_" + hash;
  }
}
