-- Impact-ordered postings, so full-text search reads a bounded number of postings per query term.
--
-- Scoring every posting of a query's terms grows with the corpus: at 100k chunks a common term has
-- 15-30k postings, and summing them per chunk was most of a search's time. Each posting now carries
-- its BM25 term weight without the idf (its "impact"); an index ordered by it lets search read a
-- term's best postings first and stop after a fixed number, then compute exact scores for the
-- chunks it kept (SearchSql).
--
-- The impact depends on the tenant's average chunk length, which every ingest moves. It is computed
-- with a snapshot of that average (corpus_stats.impact_avgdl), and search only uses it to choose
-- which postings to read: the scores themselves are computed from tf and the length with the
-- current average. So a stale snapshot never changes a score, only (slightly) which postings of a
-- term come first. When the current average moves more than 25% from the snapshot, the tenant's
-- impacts are recomputed with the new average. Moving it that far takes as many new tokens as the
-- corpus already has (or removing a good part of it), so the recomputations cost amortised O(1)
-- per posting written, like a growing array's copies.

-- BM25 with k1 = 1.2 and b = 0.75, as SearchSql.K1 and SearchSql.B. Without a snapshot (a tenant's
-- first chunks, before corpus_stats has one) the chunk's own length stands in for the average.
CREATE FUNCTION term_impact(tf integer, token_count integer, avgdl float8) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (tf * 2.2::float8
          / (tf + 1.2::float8 * (0.25::float8
               + 0.75::float8 * token_count / greatest(coalesce(avgdl, token_count), 1.0))))::real
$$;

-- The average as search computes it (SearchSql's stats CTE).
CREATE FUNCTION corpus_avgdl(chunk_count bigint, total_tokens bigint) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT greatest(total_tokens::float8 / greatest(chunk_count, 1), 1.0)
$$;

ALTER TABLE corpus_stats ADD COLUMN impact_avgdl float8;
ALTER TABLE chunk_terms ADD COLUMN impact real;

-- The migration runs as the owner, whom row-level security (V7) holds to one tenant unless it opts in.
SELECT set_config('quarry.all_tenants', 'on', true);

UPDATE corpus_stats SET impact_avgdl = corpus_avgdl(chunk_count, total_tokens);

UPDATE chunk_terms t SET impact = term_impact(t.tf, t.token_count, s.impact_avgdl)
FROM corpus_stats s WHERE s.tenant_id = t.tenant_id;

-- Postings of a tenant without a corpus_stats row cannot exist (the same triggers write both),
-- but NOT NULL must hold for every row.
UPDATE chunk_terms SET impact = term_impact(tf, token_count, NULL) WHERE impact IS NULL;

ALTER TABLE chunk_terms ALTER COLUMN impact SET NOT NULL;

SELECT set_config('quarry.all_tenants', '', true);

-- Covering, so reading a term's best postings is an index-only scan that stops after the limit.
CREATE INDEX chunk_terms_impact ON chunk_terms (tenant_id, term, impact DESC)
  INCLUDE (chunk_id, document_id, tf, token_count);

-- Takes a new snapshot for each of the tenants whose average length has moved more than 25% from
-- theirs (or that have none yet), and recomputes their impacts with it.
CREATE FUNCTION term_impacts_rebase(tenants uuid[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT s.tenant_id, corpus_avgdl(s.chunk_count, s.total_tokens) AS avgdl
    FROM corpus_stats s
    WHERE s.tenant_id = ANY (tenants) AND s.chunk_count > 0
      AND (s.impact_avgdl IS NULL
           OR corpus_avgdl(s.chunk_count, s.total_tokens) > s.impact_avgdl * 1.25
           OR corpus_avgdl(s.chunk_count, s.total_tokens) < s.impact_avgdl / 1.25)
    ORDER BY s.tenant_id
  LOOP
    UPDATE corpus_stats SET impact_avgdl = r.avgdl WHERE tenant_id = r.tenant_id;
    UPDATE chunk_terms SET impact = term_impact(tf, token_count, r.avgdl)
    WHERE tenant_id = r.tenant_id;
  END LOOP;
END $$;

-- V5's statement-level indexing of inserted chunks, now with impacts. corpus_stats already counts
-- the new chunks (its trigger, chunks_stats_insert, sorts and so fires before chunks_terms_insert),
-- so the snapshot is rebased first if they moved the average, then the new postings use it.
CREATE OR REPLACE FUNCTION chunks_index_new_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM term_impacts_rebase(ARRAY(SELECT DISTINCT tenant_id FROM new_rows));
  INSERT INTO chunk_terms (tenant_id, term, chunk_id, document_id, tf, token_count, impact)
  SELECT n.tenant_id, t.lexeme, n.id, n.document_id, cardinality(t.positions), n.token_count,
         term_impact(cardinality(t.positions), n.token_count, s.impact_avgdl)
  FROM new_rows n
  LEFT JOIN corpus_stats s ON s.tenant_id = n.tenant_id
  CROSS JOIN LATERAL unnest(to_tsvector('english', n.content)) AS t;
  RETURN NULL;
END $$;

-- V2's row-level re-indexing of a chunk whose content changed, now with impacts.
CREATE OR REPLACE FUNCTION chunks_index_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM chunk_terms WHERE chunk_id = OLD.id;
  END IF;
  INSERT INTO chunk_terms (tenant_id, term, chunk_id, document_id, tf, token_count, impact)
  SELECT NEW.tenant_id, t.lexeme, NEW.id, NEW.document_id, cardinality(t.positions),
         NEW.token_count,
         term_impact(cardinality(t.positions), NEW.token_count,
                     (SELECT s.impact_avgdl FROM corpus_stats s WHERE s.tenant_id = NEW.tenant_id))
  FROM unnest(to_tsvector('english', NEW.content)) AS t;
  RETURN NULL;
END $$;

-- Deletes and content updates move the average too; their corpus_stats triggers (chunks_stats_*)
-- sort before these and have run by then.
CREATE FUNCTION chunks_rebase_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM term_impacts_rebase(ARRAY(SELECT DISTINCT tenant_id FROM old_rows));
  RETURN NULL;
END $$;

CREATE FUNCTION chunks_rebase_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM term_impacts_rebase(ARRAY(SELECT DISTINCT tenant_id FROM new_rows));
  RETURN NULL;
END $$;

CREATE TRIGGER chunks_terms_rebase_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION chunks_rebase_after_delete();

CREATE TRIGGER chunks_terms_rebase_update AFTER UPDATE ON chunks
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION chunks_rebase_after_update();
