-- The uri is a document's identity (README, POST /v1/documents), its bytes are not: two uris may
-- hold the same bytes, and a uri's new version that happens to equal another document's bytes
-- replaces that uri's document. With (tenant_id, content_hash) unique, such an ingest was answered
-- "unchanged" with the other document and the uri kept its old, still searchable text (red team
-- R6-4). An ingest now finds its document by (tenant_id, uri) only, which stays unique.
ALTER TABLE documents DROP CONSTRAINT documents_tenant_id_content_hash_key;
