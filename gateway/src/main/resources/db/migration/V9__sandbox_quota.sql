-- The per-tenant quota of sandboxes held at once (issue 14: one tenant took every sandbox slot).
-- NULL, like the other columns: the tenant has the configured default (QUARRY_QUOTA_CONCURRENT_SANDBOXES).
ALTER TABLE tenant_quotas ADD COLUMN concurrent_sandboxes integer;
