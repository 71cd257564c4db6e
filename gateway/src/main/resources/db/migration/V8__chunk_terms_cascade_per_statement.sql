-- chunk_terms loses its foreign key to chunks; a statement-level trigger removes a deleted chunk's
-- postings instead.
--
-- The key checked every posting as it was written: one lookup and row lock in chunks per
-- (chunk, lexeme), about a thousand for an ordinary document (measured: 10 short chunks, warm,
-- EXPLAIN ANALYZE, 15.5 ms with the key and 3.5 ms without; the ingest benchmark's chunk insert,
-- which also carries the round trip, the vectors and the HNSW index, 16.3 -> 14.7 ms a document).
-- It guarded nothing: chunk_terms is written only by the triggers of chunks (V2's
-- chunks_index_terms on an update, V5's chunks_index_new_terms on an insert), from the very chunk
-- rows being written. What it did do, cascading a chunk's delete, it did one chunk at a time, and
-- term_stats' statement trigger then ran once per chunk; here both run once per statement.

ALTER TABLE chunk_terms DROP CONSTRAINT chunk_terms_chunk_id_fkey;

CREATE FUNCTION chunks_remove_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM chunk_terms t USING old_rows o WHERE t.chunk_id = o.id;
  RETURN NULL;
END $$;

CREATE TRIGGER chunks_terms_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION chunks_remove_terms();
