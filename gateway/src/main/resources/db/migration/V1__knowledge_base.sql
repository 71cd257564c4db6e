-- The knowledge base: tenants, documents, their items (docling-style) and chunks.
-- Every table carries tenant_id; queries always filter by it.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
  id         uuid PRIMARY KEY,
  name       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO tenants (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'default');

CREATE TABLE documents (
  id           uuid PRIMARY KEY,
  tenant_id    uuid NOT NULL REFERENCES tenants (id),
  title        text NOT NULL,
  uri          text NOT NULL,               -- where it came from: a file name, a path or a URL
  source_type  text NOT NULL,               -- pdf, docx, html, markdown, text, docling
  content_hash text NOT NULL,               -- sha256 of the source bytes, hex
  byte_size    bigint NOT NULL,
  content      text NOT NULL,               -- content.txt
  toc          jsonb NOT NULL,              -- toc.json
  item_count   integer NOT NULL,
  chunk_count  integer NOT NULL,
  version      integer NOT NULL DEFAULT 1,  -- bumped when a changed source replaces it
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, uri),
  UNIQUE (tenant_id, content_hash)
);

CREATE INDEX documents_tenant_created ON documents (tenant_id, created_at, id);

-- One row per document item, exactly the items.jsonl of CONTRACT.md, plus the item range of the
-- innermost section that holds it (for context expansion).
CREATE TABLE items (
  tenant_id     uuid NOT NULL,
  document_id   uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  position      integer NOT NULL,
  self_ref      text NOT NULL,
  label         text NOT NULL,
  text          text NOT NULL,
  page_numbers  integer[] NOT NULL,
  heading_level smallint NOT NULL,
  tree_depth    smallint NOT NULL,
  section_start integer NOT NULL,
  section_end   integer NOT NULL,
  PRIMARY KEY (document_id, position)
);

-- Chunks: contiguous item ranges that respect sections and tables, with their embedding.
CREATE TABLE chunks (
  id              uuid PRIMARY KEY,
  tenant_id       uuid NOT NULL,
  document_id     uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  ordinal         integer NOT NULL,
  item_start      integer NOT NULL,         -- first item position
  item_end        integer NOT NULL,         -- one past the last item position
  headings        text[] NOT NULL,          -- the section path
  content         text NOT NULL,            -- the chunk's own text (what is embedded and indexed)
  page_numbers    integer[] NOT NULL,
  doc_item_refs   text[] NOT NULL,
  labels          text[] NOT NULL,
  embedding_model text NOT NULL,
  embedding       vector NOT NULL,
  UNIQUE (document_id, ordinal)
);

CREATE INDEX chunks_tenant ON chunks (tenant_id);
