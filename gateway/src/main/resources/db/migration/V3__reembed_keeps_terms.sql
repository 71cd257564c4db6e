-- Re-embedding rewrites chunks.embedding and chunks.embedding_model on every chunk after a model
-- change, but never the content: the BM25 index must not be touched by it.
--
-- V2's row triggers fire on any UPDATE that names content, even with the same text, and its
-- statement trigger rewrites corpus_stats on every UPDATE of chunks, even with nothing to add.
-- Here the row triggers fire only when the content really changes, and corpus_stats is written
-- only when a tenant's total length changes, so an embedding-only update costs the BM25 side nothing
-- (no dead chunk_terms or corpus_stats rows, no lock on the tenant's corpus_stats row).

-- WHEN may not name OLD on an INSERT trigger, so each trigger is split into INSERT and UPDATE.
DROP TRIGGER chunks_token_count ON chunks;
DROP TRIGGER chunks_terms ON chunks;

CREATE TRIGGER chunks_token_count_insert BEFORE INSERT ON chunks
  FOR EACH ROW EXECUTE FUNCTION chunks_set_token_count();

CREATE TRIGGER chunks_token_count_update BEFORE UPDATE OF content ON chunks
  FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
  EXECUTE FUNCTION chunks_set_token_count();

CREATE TRIGGER chunks_terms_insert AFTER INSERT ON chunks
  FOR EACH ROW EXECUTE FUNCTION chunks_index_terms();

CREATE TRIGGER chunks_terms_update AFTER UPDATE OF content ON chunks
  FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
  EXECUTE FUNCTION chunks_index_terms();

-- A statement trigger with transition tables cannot be limited to columns, so the function itself
-- skips tenants whose total length is unchanged.
CREATE OR REPLACE FUNCTION corpus_stats_replace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE corpus_stats s
  SET total_tokens = s.total_tokens + d.delta
  FROM (SELECT n.tenant_id, sum(n.token_count - o.token_count) AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id GROUP BY n.tenant_id) d
  WHERE s.tenant_id = d.tenant_id AND d.delta <> 0;
  RETURN NULL;
END $$;
