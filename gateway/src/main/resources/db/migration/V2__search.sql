-- Search: an inverted index for BM25 next to the chunks, kept in step by triggers.
--
-- PostgreSQL's ts_rank has no inverse document frequency, so a rare term weighs no more than a
-- common one; BM25 needs per-term document frequencies, per-chunk lengths and the corpus average
-- length, which these tables provide. The HNSW vector indexes are not here: they depend on the
-- embedding model and its dimensions, so SearchService.prepare() creates one per model at start-up.

-- Length of the chunk in indexed tokens (lexeme positions of to_tsvector('english', content)).
ALTER TABLE chunks ADD COLUMN token_count integer NOT NULL DEFAULT 0;

-- One row per (chunk, lexeme). document_id and token_count are copied in so that scoring a
-- posting list needs no lookup into chunks (the covering primary key makes it an index-only scan).
CREATE TABLE chunk_terms (
  tenant_id   uuid NOT NULL,
  term        text NOT NULL,
  chunk_id    uuid NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
  document_id uuid NOT NULL,
  tf          integer NOT NULL,   -- positions of the lexeme in the chunk (tsvector keeps at most 256)
  token_count integer NOT NULL,   -- the chunk's length, as in chunks.token_count
  PRIMARY KEY (tenant_id, term, chunk_id) INCLUDE (document_id, tf, token_count)
);

CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);

-- Per-tenant corpus statistics for BM25: N and the total length (average = total / N).
CREATE TABLE corpus_stats (
  tenant_id    uuid PRIMARY KEY,
  chunk_count  bigint NOT NULL,
  total_tokens bigint NOT NULL
);

CREATE FUNCTION chunks_set_token_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.token_count := coalesce(
      (SELECT sum(cardinality(positions)) FROM unnest(to_tsvector('english', NEW.content))), 0);
  RETURN NEW;
END $$;

CREATE FUNCTION chunks_index_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM chunk_terms WHERE chunk_id = OLD.id;
  END IF;
  INSERT INTO chunk_terms (tenant_id, term, chunk_id, document_id, tf, token_count)
  SELECT NEW.tenant_id, t.lexeme, NEW.id, NEW.document_id, cardinality(t.positions), NEW.token_count
  FROM unnest(to_tsvector('english', NEW.content)) AS t;
  RETURN NULL;
END $$;

-- Statement-level, so a bulk insert of a document's chunks updates the tenant's row once.
CREATE FUNCTION corpus_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO corpus_stats AS s (tenant_id, chunk_count, total_tokens)
  SELECT tenant_id, count(*), sum(token_count) FROM new_rows GROUP BY tenant_id
  ON CONFLICT (tenant_id) DO UPDATE
    SET chunk_count = s.chunk_count + EXCLUDED.chunk_count,
        total_tokens = s.total_tokens + EXCLUDED.total_tokens;
  RETURN NULL;
END $$;

CREATE FUNCTION corpus_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE corpus_stats s
  SET chunk_count = s.chunk_count - d.n, total_tokens = s.total_tokens - d.tokens
  FROM (SELECT tenant_id, count(*) AS n, sum(token_count) AS tokens
        FROM old_rows GROUP BY tenant_id) d
  WHERE s.tenant_id = d.tenant_id;
  RETURN NULL;
END $$;

CREATE FUNCTION corpus_stats_replace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE corpus_stats s
  SET total_tokens = s.total_tokens + d.delta
  FROM (SELECT n.tenant_id, sum(n.token_count - o.token_count) AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id GROUP BY n.tenant_id) d
  WHERE s.tenant_id = d.tenant_id;
  RETURN NULL;
END $$;

CREATE TRIGGER chunks_token_count BEFORE INSERT OR UPDATE OF content ON chunks
  FOR EACH ROW EXECUTE FUNCTION chunks_set_token_count();

CREATE TRIGGER chunks_terms AFTER INSERT OR UPDATE OF content ON chunks
  FOR EACH ROW EXECUTE FUNCTION chunks_index_terms();

CREATE TRIGGER chunks_stats_insert AFTER INSERT ON chunks
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION corpus_stats_add();

CREATE TRIGGER chunks_stats_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION corpus_stats_remove();

CREATE TRIGGER chunks_stats_update AFTER UPDATE ON chunks
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION corpus_stats_replace();
