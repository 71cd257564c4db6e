-- A version of each tenant's BM25 postings, so that a gateway may keep a copy of them in memory
-- and know, in the same statement that reads a query's document frequencies, whether its copy is
-- still what the database holds (search/TermIndexes).
--
-- Every statement that writes a tenant's chunk_terms (an ingest, a delete, a re-index) sets the
-- tenant's term_version to a fresh value of one sequence. The value is never reused, not even when
-- a tenant's corpus_stats row goes and comes back, so two different sets of postings never carry
-- the same version. The writers of one tenant already take turns (term_stats_lock, V4), so the
-- version a reader sees always belongs to the postings it sees in the same snapshot.

CREATE SEQUENCE term_index_version;

-- The rows already here are version 0, a value the sequence never gives: the first write moves them.
ALTER TABLE corpus_stats ADD COLUMN term_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION term_index_bump(tenants uuid[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO corpus_stats AS s (tenant_id, chunk_count, total_tokens, term_version)
  SELECT t, 0, 0, nextval('term_index_version') FROM unnest(tenants) AS t ORDER BY t
  ON CONFLICT (tenant_id) DO UPDATE SET term_version = EXCLUDED.term_version
$$;

CREATE OR REPLACE FUNCTION term_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tenants uuid[] := ARRAY(SELECT DISTINCT tenant_id FROM new_rows);
BEGIN
  PERFORM term_stats_lock(tenants);
  INSERT INTO term_stats AS s (tenant_id, term, df)
  SELECT tenant_id, term, count(*) FROM new_rows GROUP BY tenant_id, term ORDER BY tenant_id, term
  ON CONFLICT (tenant_id, term) DO UPDATE SET df = s.df + EXCLUDED.df;
  PERFORM term_index_bump(tenants);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION term_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tenants uuid[] := ARRAY(SELECT DISTINCT tenant_id FROM old_rows);
BEGIN
  PERFORM term_stats_lock(tenants);
  UPDATE term_stats s SET df = s.df - d.n
  FROM (SELECT tenant_id, term, count(*) AS n FROM old_rows GROUP BY tenant_id, term) d
  WHERE s.tenant_id = d.tenant_id AND s.term = d.term;
  PERFORM term_index_bump(tenants);
  RETURN NULL;
END $$;
