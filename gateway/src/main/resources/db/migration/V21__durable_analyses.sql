-- Durable analyses (issue 35): an analysis is held by the replica running it, and another replica
-- takes it over when that one dies or hands it off; a finished analysis takes follow-up questions.
--
-- replica_id: the replica that runs it now (V18's replicas; no foreign key, as a dead replica's row
--   goes at the sweep while its analyses wait to be taken over). NULL for a running analysis: handed
--   off by a draining replica, any replica may take it at once. Its lease is the replica's lease:
--   one row renewed per replica, not one per analysis.
-- moves: how many times it was taken over (0: it ran where it started).
-- deadline_at: when its wall time runs out; a take-over moves it by the time nobody ran it.
-- follows: the finished analysis whose question this one follows up (its cells are rebuilt first).
-- cancel_requested: see below.
ALTER TABLE analyses
  ADD COLUMN replica_id  uuid,
  ADD COLUMN moves       integer NOT NULL DEFAULT 0,
  ADD COLUMN deadline_at timestamptz,
  ADD COLUMN follows     uuid REFERENCES analyses (id) ON DELETE SET NULL,
  -- A cancel asked while no replica held it (between its replica's death and the take-over): the
  -- replica that takes it over ends it cancelled rather than carrying it on.
  ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;

CREATE INDEX analyses_running ON analyses (replica_id) WHERE status = 'running';
-- The answered analysis whose answer a chat client sends back as its assistant turn (the
-- OpenAI-compatible endpoint continues it).
CREATE INDEX analyses_answers ON analyses (tenant_id, md5(answer)) WHERE status = 'succeeded';

-- What each callback of a cell answered, so that a rebuild answers it again without calling (and
-- paying) again: the call's kind and a digest of its whole arguments (to tell the call it answers),
-- the answer as the sandbox got it (JSON text), and an llm() call's tokens. Written with the events
-- of the cell, in the same transactions, before the step that ends the cell.
CREATE TABLE analysis_callbacks (
  tenant_id   uuid NOT NULL,
  analysis_id uuid NOT NULL REFERENCES analyses (id) ON DELETE CASCADE,
  step        integer NOT NULL,
  ordinal     integer NOT NULL,
  kind        text NOT NULL,
  digest      text NOT NULL,
  outcome     text NOT NULL,                  -- {"value": ...} or {"error": {"type", "message"}}
  usage       jsonb,
  PRIMARY KEY (analysis_id, step, ordinal)
);

ALTER TABLE analysis_callbacks ENABLE ROW LEVEL SECURITY;
ALTER TABLE analysis_callbacks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON analysis_callbacks
  USING (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('quarry.tenant_id', true), '')::uuid);
DO $$
BEGIN
  EXECUTE format($p$
    CREATE POLICY owner_maintenance ON analysis_callbacks TO %I
      USING (current_setting('quarry.all_tenants', true) = 'on')
      WITH CHECK (current_setting('quarry.all_tenants', true) = 'on')
    $p$, '${flyway:user}');
END $$;

-- Takes over up to `most` running analyses whose replica is gone (its lease lapsed, or its row
-- removed) or that were handed off (replica_id NULL), oldest first, for replica `me`; returns each
-- one's tenant and id. Rows another replica is taking at the same moment are skipped, so two
-- replicas never take the same analysis. Crosses tenants, hence the owner's function (as V11).
-- Analyses from before this migration (no deadline) are left to end_abandoned_analyses.
CREATE FUNCTION take_over_analyses(me uuid, most integer)
  RETURNS TABLE (tenant_id uuid, analysis_id uuid)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = public
AS $$
BEGIN
  PERFORM set_config('quarry.all_tenants', 'on', true);
  RETURN QUERY
    WITH orphans AS (
      SELECT a.id FROM analyses a
       WHERE a.status = 'running' AND a.deadline_at IS NOT NULL
         AND (a.replica_id IS NULL OR NOT EXISTS (
               SELECT 1 FROM replicas r WHERE r.id = a.replica_id AND r.lease_until > clock_timestamp()))
       ORDER BY a.created_at
       LIMIT greatest(most, 0)
       FOR UPDATE OF a SKIP LOCKED)
    UPDATE analyses a SET replica_id = me, moves = a.moves + 1
      FROM orphans o WHERE a.id = o.id
    RETURNING a.tenant_id, a.id;
  PERFORM set_config('quarry.all_tenants', 'off', true);
END $$;

REVOKE ALL ON FUNCTION take_over_analyses(uuid, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION take_over_analyses(uuid, integer) TO ${appRole};

-- The sweep of abandoned analyses now ends only what no replica holds: an analysis whose replica
-- is live runs (a taken-over one may run past created_at + its wall time, its deadline having
-- moved), and one past its deadline (plus grace) that nobody took is ended as before.
CREATE OR REPLACE FUNCTION end_abandoned_analyses(grace_seconds double precision, message text)
  RETURNS SETOF uuid
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = public
AS $$
BEGIN
  PERFORM set_config('quarry.all_tenants', 'on', true);
  RETURN QUERY
    WITH lost AS (
      UPDATE analyses a
         SET status = 'failed', error_type = 'GatewayLost', error_message = message, finished_at = now()
       WHERE a.status = 'running'
         AND coalesce(a.deadline_at, a.created_at + make_interval(secs => (a.budgets->>'wall_time_ms')::double precision / 1000))
             + make_interval(secs => greatest(grace_seconds, 0)) < now()
         AND NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = a.replica_id AND r.lease_until > clock_timestamp())
      RETURNING a.tenant_id, a.id, a.usage)
    INSERT INTO analysis_events (tenant_id, analysis_id, seq, type, body)
    SELECT l.tenant_id, l.id, n.seq, 'failed',
           json_build_object('seq', n.seq, 'type', 'failed',
             'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'status', 'failed', 'error', json_build_object('type', 'GatewayLost', 'message', message),
             'usage', l.usage)::text
      FROM lost l
      CROSS JOIN LATERAL (SELECT coalesce(max(e.seq), 0) + 1 AS seq FROM analysis_events e
                           WHERE e.analysis_id = l.id) n
    RETURNING analysis_id;
  PERFORM set_config('quarry.all_tenants', 'off', true);
END $$;
