-- A chunk's context (V10) now also says whose filing its document is and for when, read off the
-- document's first pages (FilingIdentity). context_version records what a chunk's context was made
-- with: the rows already here were made with V10's title and file name, so they are 0, and ingest
-- writes Chunk.CONTEXT_VERSION. The Reembedder brings every chunk below it up to it (context
-- recomputed from the document and its items, then embedded again), so a tenant's chunks are never
-- left mixed without anything saying so.
ALTER TABLE chunks ADD COLUMN context_version smallint NOT NULL DEFAULT 0;

-- V3's update triggers only re-index a chunk whose content changed; BM25 indexes context too, so a
-- new context re-indexes it as well. An update of the embedding alone still touches nothing.
DROP TRIGGER chunks_token_count_update ON chunks;
DROP TRIGGER chunks_terms_update ON chunks;

CREATE TRIGGER chunks_token_count_update BEFORE UPDATE OF content, context ON chunks
  FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.context IS DISTINCT FROM NEW.context)
  EXECUTE FUNCTION chunks_set_token_count();

CREATE TRIGGER chunks_terms_update AFTER UPDATE OF content, context ON chunks
  FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.context IS DISTINCT FROM NEW.context)
  EXECUTE FUNCTION chunks_index_terms();
