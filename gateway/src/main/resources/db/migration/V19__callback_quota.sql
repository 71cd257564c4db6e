-- The per-tenant rate of sandbox callbacks (issue 33: eight executions made 146 searches a second,
-- and another tenant's searches slowed tenfold). NULL, like the other columns: the tenant has the
-- configured default (QUARRY_QUOTA_CALLBACKS_PER_MINUTE).
ALTER TABLE tenant_quotas ADD COLUMN callbacks_per_minute integer;
