-- The per-tenant quota of ingests under way at once (one tenant's queued uploads held every
-- other tenant's ingests). NULL, like the other columns: the tenant has the
-- configured default (QUARRY_QUOTA_CONCURRENT_INGESTS).
ALTER TABLE tenant_quotas ADD COLUMN concurrent_ingests integer;
