-- MCP sessions served by any replica (issue 34): a session opened through one gateway is known to
-- every other, so a load balancer may send each of its requests anywhere. What a replica needs to
-- serve a session it did not open is what the client said when it opened it (the initialize
-- request's protocol version, capabilities and client info); the rest of the MCP Java SDK's session
-- lives per request. A session idle longer than the gateway's limit (30 minutes) is gone: it is not
-- found, and the tenant's idle rows are removed when it opens the next one.
CREATE TABLE mcp_sessions (
  id         uuid PRIMARY KEY,
  tenant_id  uuid NOT NULL REFERENCES tenants (id),
  init       jsonb NOT NULL,
  opened_at  timestamptz NOT NULL DEFAULT now(),
  last_used  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_sessions_tenant ON mcp_sessions (tenant_id, last_used);

ALTER TABLE mcp_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE mcp_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mcp_sessions
  USING (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid);
DO $$
BEGIN
  EXECUTE format($p$
    CREATE POLICY owner_maintenance ON mcp_sessions TO %I
      USING (current_setting('quarry.all_tenants', true) = 'on')
      WITH CHECK (current_setting('quarry.all_tenants', true) = 'on')
    $p$, '${flyway:user}');
END $$;

-- Opens a session for the current tenant unless it holds `most` that are not idle (used within
-- `idle_seconds`); its idle ones go first. One opener per tenant at a time (a transaction-scoped
-- advisory lock), so replicas opening at once never pass the bound together. Runs as the caller,
-- inside its tenant transaction: row-level security holds it to that tenant.
CREATE FUNCTION open_mcp_session(session uuid, tenant uuid, init_params jsonb, most integer,
    idle_seconds double precision)
  RETURNS TABLE (opened boolean, held integer)
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('mcp_sessions:' || tenant::text, 0));
  DELETE FROM mcp_sessions s
   WHERE s.tenant_id = tenant AND s.last_used < clock_timestamp() - make_interval(secs => idle_seconds);
  SELECT count(*) INTO held FROM mcp_sessions s WHERE s.tenant_id = tenant;
  opened := held < most;
  IF opened THEN
    INSERT INTO mcp_sessions (id, tenant_id, init) VALUES (session, tenant, init_params);
  END IF;
  RETURN NEXT;
END $$;
