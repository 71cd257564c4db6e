-- What a chunk carries for retrieval besides its own text: the name of the document it is in (its
-- title and its file name, which for a filing is often "COMPANY_YEAR_FORM"). BM25 indexes context
-- and content together, and ingest embeds them together, so a question that names a document finds
-- its chunks; content itself, which search hits and the sandbox see, stays the chunk's own text.
-- Chunks from before this migration have an empty context and index exactly as they did.
ALTER TABLE chunks ADD COLUMN context text NOT NULL DEFAULT '';

CREATE OR REPLACE FUNCTION chunks_set_token_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.token_count := coalesce((SELECT sum(cardinality(positions))
      FROM unnest(to_tsvector('english', NEW.context || ' ' || NEW.content))), 0);
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION chunks_index_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM chunk_terms WHERE chunk_id = OLD.id;
  END IF;
  INSERT INTO chunk_terms (tenant_id, term, chunk_id, document_id, tf, token_count)
  SELECT NEW.tenant_id, t.lexeme, NEW.id, NEW.document_id, cardinality(t.positions), NEW.token_count
  FROM unnest(to_tsvector('english', NEW.context || ' ' || NEW.content)) AS t;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION chunks_index_new_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chunk_terms (tenant_id, term, chunk_id, document_id, tf, token_count)
  SELECT n.tenant_id, t.lexeme, n.id, n.document_id, cardinality(t.positions), n.token_count
  FROM new_rows n CROSS JOIN LATERAL unnest(to_tsvector('english', n.context || ' ' || n.content)) AS t;
  RETURN NULL;
END $$;
