-- The tenant's term_version (V13, V15) also moves on every statement that writes the tenant's items
-- or documents, since search now copies into memory what context expansion reads of them (the
-- items' text and sections, the documents' titles and uris: search/ContextIndexes). Ingest writes
-- them in the same transaction as the chunks, which already move the version; these triggers make
-- the version true for any other writer as well.
--
-- Only the tenant's corpus_stats row is taken here (by term_index_bump), not the advisory lock of
-- term_stats_lock: every writer of chunks takes the row first and the advisory lock after it, and a
-- writer that took them in the other order could deadlock with one of those.

CREATE FUNCTION content_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tenants uuid[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    tenants := ARRAY(SELECT DISTINCT tenant_id FROM old_rows ORDER BY 1);
  ELSE
    tenants := ARRAY(SELECT DISTINCT tenant_id FROM new_rows ORDER BY 1);
  END IF;
  IF cardinality(tenants) > 0 THEN
    PERFORM term_index_bump(tenants);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER items_version_insert AFTER INSERT ON items
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION content_version_bump();

CREATE TRIGGER items_version_delete AFTER DELETE ON items
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION content_version_bump();

CREATE TRIGGER items_version_update AFTER UPDATE ON items
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION content_version_bump();

CREATE TRIGGER documents_version_update AFTER UPDATE ON documents
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION content_version_bump();
