-- Tenancy: API keys, and row-level security as a second fence behind the queries' tenant filters.
--
-- The gateway connects as ${appRole}, which neither owns these tables nor bypasses RLS; it sets the
-- tenant per transaction (SET LOCAL quarry.tenant_id), so a pooled connection never carries one
-- over. Without a tenant set, every tenant table reads as empty and refuses writes.
--
-- The owner role (${flyway:user}, which runs these migrations) is held to the same policies (FORCE),
-- except in a session that asks for every tenant on purpose (SET quarry.all_tenants = on): that is
-- the path for maintenance, migrations that move data, and tests that look across tenants. The app
-- role cannot take it, whatever it sets: that policy is the owner's alone.

CREATE TABLE api_keys (
  id           uuid PRIMARY KEY,
  tenant_id    uuid NOT NULL REFERENCES tenants (id),
  prefix       text NOT NULL UNIQUE,          -- shown in listings, to tell keys apart
  key_hash     bytea NOT NULL UNIQUE,         -- sha256 of the whole key; the key itself is never stored
  name         text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);

CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);

-- Per-tenant quota overrides; a missing row or a NULL column means the configured default.
CREATE TABLE tenant_quotas (
  tenant_id            uuid PRIMARY KEY REFERENCES tenants (id),
  requests_per_minute  integer,
  stored_bytes         bigint,
  document_bytes       bigint,
  concurrent_analyses  integer,
  model_tokens_per_day bigint
);

-- Model tokens a tenant used per UTC day (the agent records them; the quota reads them).
CREATE TABLE token_usage (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  day       date NOT NULL,
  tokens    bigint NOT NULL,
  PRIMARY KEY (tenant_id, day)
);

-- Every table with a tenant_id column, whichever migration made it (V6's included): enabled,
-- forced, one policy for reads and writes alike.
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT c.table_name
    FROM information_schema.columns c
    JOIN information_schema.tables tb
      ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id'
      AND tb.table_type = 'BASE TABLE'
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t.table_name);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t.table_name);
    EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %I', t.table_name);
    EXECUTE format('DROP POLICY IF EXISTS owner_maintenance ON %I', t.table_name);
    -- The one condition every role's statements get; kept to a plain equality so the planner
    -- estimates it like the statements' own tenant filter (and still picks the vector index).
    EXECUTE format($p$
      CREATE POLICY tenant_isolation ON %I
        USING (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid)
        WITH CHECK (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid)
      $p$, t.table_name);
    -- Only for the owner, and only in a session that opted in: other roles never see this policy.
    EXECUTE format($p$
      CREATE POLICY owner_maintenance ON %I TO %I
        USING (current_setting('quarry.all_tenants', true) = 'on')
        WITH CHECK (current_setting('quarry.all_tenants', true) = 'on')
      $p$, t.table_name, '${flyway:user}');
  END LOOP;
END $$;

-- The key lookup happens before any tenant is known, so it runs as the owner, across tenants, and
-- answers only the one thing the gateway needs: whose key is this, if it is live.
-- (The opt-in is set in the body: PostgreSQL lets only superusers attach a custom setting to a
-- function's definition. It is set back before returning, and it would mean nothing to the app
-- role anyway: only the owner has the policy that reads it.)
CREATE FUNCTION api_key_tenant(hash bytea) RETURNS uuid
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = public
AS $$
DECLARE
  found uuid;
BEGIN
  PERFORM set_config('quarry.all_tenants', 'on', true);
  SELECT tenant_id INTO found FROM api_keys WHERE key_hash = hash AND revoked_at IS NULL;
  PERFORM set_config('quarry.all_tenants', 'off', true);
  RETURN found;
END $$;

-- Removes every row of the current tenant (quarry.tenant_id) from every tenant table, then the
-- tenant. Tables are found from the catalogue, so tables added later are covered; foreign keys
-- between them are satisfied by retrying the tables a pass could not empty yet.
CREATE FUNCTION delete_current_tenant() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  tenant uuid := nullif(current_setting('quarry.tenant_id', true), '')::uuid;
  pending text[];
  left_over text[];
  t text;
  pass int := 0;
BEGIN
  IF tenant IS NULL THEN
    RAISE EXCEPTION 'delete_current_tenant: no tenant set';
  END IF;
  SELECT array_agg(c.table_name::text) INTO pending
  FROM information_schema.columns c
  JOIN information_schema.tables tb
    ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
  WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id'
    AND tb.table_type = 'BASE TABLE';
  WHILE cardinality(pending) > 0 LOOP
    pass := pass + 1;
    IF pass > 20 THEN
      RAISE EXCEPTION 'delete_current_tenant: cannot empty %', pending;
    END IF;
    left_over := '{}';
    FOREACH t IN ARRAY pending LOOP
      BEGIN
        EXECUTE format('DELETE FROM %I WHERE tenant_id = $1', t) USING tenant;
      EXCEPTION WHEN foreign_key_violation THEN
        left_over := left_over || t;
      END;
    END LOOP;
    pending := left_over;
  END LOOP;
  DELETE FROM tenants WHERE id = tenant;
  RETURN FOUND;
END $$;

GRANT USAGE ON SCHEMA public TO ${appRole};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${appRole};
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${appRole};
-- /readyz reads the schema version; nothing else of Flyway's is the app's business.
REVOKE ALL ON flyway_schema_history FROM ${appRole};
GRANT SELECT ON flyway_schema_history TO ${appRole};
-- Tables of later migrations: the grants follow (their RLS must be enabled by the migration).
ALTER DEFAULT PRIVILEGES IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${appRole};
ALTER DEFAULT PRIVILEGES IN SCHEMA public
  GRANT USAGE, SELECT ON SEQUENCES TO ${appRole};
