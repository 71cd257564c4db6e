-- One truth across replicas (issue 34): quotas counted in PostgreSQL, not per gateway process.
--
-- A replica is one gateway process. It registers under a random id when it starts and renews its
-- lease while it lives; a replica whose lease has lapsed (killed, its node lost, cut off from the
-- database) no longer counts, and its rows go when any replica sweeps (the foreign keys cascade).
CREATE TABLE replicas (
  id          uuid PRIMARY KEY,
  gateway_id  text NOT NULL,                  -- QUARRY_GATEWAY_ID, to tell replicas apart in a listing
  started_at  timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz NOT NULL
);

-- A place in one of a tenant's concurrent quotas (concurrent_analyses, concurrent_ingests,
-- concurrent_sandboxes, request bodies), held by the replica that took it until the work ends.
-- Only places of replicas whose lease is current count.
CREATE TABLE quota_places (
  id         uuid PRIMARY KEY,
  tenant_id  uuid NOT NULL REFERENCES tenants (id),
  quota      text NOT NULL,
  replica_id uuid NOT NULL REFERENCES replicas (id) ON DELETE CASCADE,
  taken_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quota_places_tenant ON quota_places (tenant_id, quota);
CREATE INDEX quota_places_replica ON quota_places (replica_id);

-- A tenant's rate quota (requests_per_minute, and any other per-minute quota) as one token
-- bucket: capacity a minute's worth, refilled continuously. Replicas take tokens from it in small
-- batches and spend them locally (tenancy/RateLimits), so the bucket is touched once a batch.
CREATE TABLE rate_buckets (
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  quota       text NOT NULL,
  tokens      double precision NOT NULL,
  refilled_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, quota)
);

-- Work done once across replicas on a schedule (the sweep of abandoned analyses, of lapsed
-- replicas): the replica whose UPDATE moves next_run_at forward runs it; the others find it done.
CREATE TABLE cluster_jobs (
  name        text PRIMARY KEY,
  next_run_at timestamptz NOT NULL,
  last_run_by uuid
);

-- The two tenant tables are under row-level security like every other (V7's two policies).
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['quota_places', 'rate_buckets'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format($p$
      CREATE POLICY tenant_isolation ON %I
        USING (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid)
        WITH CHECK (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid)
      $p$, t);
    EXECUTE format($p$
      CREATE POLICY owner_maintenance ON %I TO %I
        USING (current_setting('quarry.all_tenants', true) = 'on')
        WITH CHECK (current_setting('quarry.all_tenants', true) = 'on')
      $p$, t, '${flyway:user}');
  END LOOP;
END $$;

-- Takes a place for the current tenant unless it already holds `most` (counting live replicas'
-- places only). The tenant's places of one quota are counted and taken one caller at a time (a
-- transaction-scoped advisory lock), so two replicas never both take the last place. Runs as the
-- caller, inside its tenant transaction: row-level security holds it to that tenant.
CREATE FUNCTION take_quota_place(place uuid, tenant uuid, quota_name text, replica uuid, most integer)
  RETURNS TABLE (taken boolean, held integer)
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('quota_place:' || tenant::text || ':' || quota_name, 0));
  SELECT count(*) INTO held
    FROM quota_places p JOIN replicas r ON r.id = p.replica_id
   WHERE p.tenant_id = tenant AND p.quota = quota_name AND r.lease_until > clock_timestamp();
  taken := held < most;
  IF taken THEN
    INSERT INTO quota_places (id, tenant_id, quota, replica_id) VALUES (place, tenant, quota_name, replica);
  END IF;
  RETURN NEXT;
END $$;

-- Takes up to `wanted` whole tokens from the current tenant's bucket of one rate quota (made full
-- on first use): the bucket is refilled for the time since it was last touched, at `per_minute`
-- a minute up to `per_minute`, then what is taken is removed. Answers what was granted and what is
-- left (a fraction below one when nothing was). The row lock orders concurrent callers; the
-- database's clock is the only one that counts.
CREATE FUNCTION take_rate_tokens(tenant uuid, quota_name text, per_minute double precision, wanted integer)
  RETURNS TABLE (granted integer, left_over double precision)
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  have double precision;
  last timestamptz;
  at timestamptz;
BEGIN
  INSERT INTO rate_buckets (tenant_id, quota, tokens, refilled_at)
    VALUES (tenant, quota_name, per_minute, clock_timestamp())
    ON CONFLICT (tenant_id, quota) DO NOTHING;
  SELECT b.tokens, b.refilled_at INTO have, last
    FROM rate_buckets b WHERE b.tenant_id = tenant AND b.quota = quota_name FOR UPDATE;
  at := greatest(clock_timestamp(), last);
  have := least(per_minute, have + extract(epoch FROM at - last) * per_minute / 60);
  granted := least(greatest(wanted, 0), floor(have))::integer;
  left_over := have - granted;
  UPDATE rate_buckets b SET tokens = left_over, refilled_at = at
   WHERE b.tenant_id = tenant AND b.quota = quota_name;
  RETURN NEXT;
END $$;
