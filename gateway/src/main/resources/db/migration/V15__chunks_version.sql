-- The tenant's term_version (V13) now moves on every statement that writes the tenant's chunks,
-- not only on those that write its postings, so that it versions everything search copies into
-- memory: the postings (search/TermIndexes) and the vectors (search/VectorIndexes). Before, a chunk
-- without a single term, or a chunk re-embedded under a new model, left the version where it was.
--
-- These triggers fire after chunks_stats_* (trigger names order them), which already hold the
-- tenant's corpus_stats row; the advisory lock comes next, as in every other writer of the tenant.

CREATE FUNCTION chunks_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tenants uuid[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    tenants := ARRAY(SELECT DISTINCT tenant_id FROM old_rows ORDER BY 1);
  ELSE
    tenants := ARRAY(SELECT DISTINCT tenant_id FROM new_rows ORDER BY 1);
  END IF;
  IF cardinality(tenants) > 0 THEN
    PERFORM term_stats_lock(tenants);
    PERFORM term_index_bump(tenants);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER chunks_version_insert AFTER INSERT ON chunks
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION chunks_version_bump();

CREATE TRIGGER chunks_version_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION chunks_version_bump();

CREATE TRIGGER chunks_version_update AFTER UPDATE ON chunks
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION chunks_version_bump();
