-- Document frequencies for BM25, kept in step with chunk_terms.
--
-- Counting a term's postings at query time costs a scan of its whole posting list: at 100k chunks
-- a common term has 15-30k postings, and a query has a dozen terms. Here df is one index lookup.
-- The triggers are on chunk_terms itself, so they hold however chunk_terms is written.

CREATE TABLE term_stats (
  tenant_id uuid NOT NULL,
  term      text NOT NULL,
  df        bigint NOT NULL,   -- chunks of the tenant holding the term; 0 once they are all gone
  PRIMARY KEY (tenant_id, term)
);

INSERT INTO term_stats (tenant_id, term, df)
SELECT tenant_id, term, count(*) FROM chunk_terms GROUP BY tenant_id, term;

-- A transaction that writes chunks runs one statement per chunk, and each one upserts the rows of
-- its terms; two such transactions would deadlock, each holding a term the other needs next. The
-- per-tenant advisory lock, taken before any term row, orders them (it is held to commit, as the
-- tenant's corpus_stats row already is), so writers of one tenant take turns and never deadlock.
CREATE FUNCTION term_stats_lock(tenants uuid[]) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtextextended('term_stats:' || t::text, 0))
  FROM unnest(tenants) AS t ORDER BY t
$$;

CREATE FUNCTION term_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM term_stats_lock(ARRAY(SELECT DISTINCT tenant_id FROM new_rows));
  INSERT INTO term_stats AS s (tenant_id, term, df)
  SELECT tenant_id, term, count(*) FROM new_rows GROUP BY tenant_id, term ORDER BY tenant_id, term
  ON CONFLICT (tenant_id, term) DO UPDATE SET df = s.df + EXCLUDED.df;
  RETURN NULL;
END $$;

CREATE FUNCTION term_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM term_stats_lock(ARRAY(SELECT DISTINCT tenant_id FROM old_rows));
  UPDATE term_stats s SET df = s.df - d.n
  FROM (SELECT tenant_id, term, count(*) AS n FROM old_rows GROUP BY tenant_id, term) d
  WHERE s.tenant_id = d.tenant_id AND s.term = d.term;
  RETURN NULL;
END $$;

CREATE TRIGGER chunk_terms_df_insert AFTER INSERT ON chunk_terms
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION term_stats_add();

CREATE TRIGGER chunk_terms_df_delete AFTER DELETE ON chunk_terms
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION term_stats_remove();
