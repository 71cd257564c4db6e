-- The sweep of analyses a dead gateway left running (AbandonedAnalyses) crosses tenants, which
-- row-level security allows only the owner, in a session that opted in (V7). It used to run on an
-- owner pool that every gateway held for its whole life; now it is this function, the owner's,
-- which the gateway's role may call and which does that one thing, so after start-up a gateway
-- holds no owner connection (the owner only migrates and builds the vector index at start-up).
--
-- It ends, as failed with GatewayLost, every analysis still running longer than its own wall-time
-- budget plus grace_seconds (at least 0: nothing is ended within its own budget), and writes the
-- terminal event its stored stream lacks, in one statement: both or neither. Returns their ids.
CREATE FUNCTION end_abandoned_analyses(grace_seconds double precision, message text)
  RETURNS SETOF uuid
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = public
AS $$
BEGIN
  PERFORM set_config('quarry.all_tenants', 'on', true);
  RETURN QUERY
    WITH lost AS (
      UPDATE analyses
         SET status = 'failed', error_type = 'GatewayLost', error_message = message, finished_at = now()
       WHERE status = 'running'
         AND created_at + make_interval(secs => (budgets->>'wall_time_ms')::double precision / 1000
                                                + greatest(grace_seconds, 0)) < now()
      RETURNING tenant_id, id, usage)
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

-- Functions are executable by PUBLIC unless revoked: this one only by the gateway's role.
REVOKE ALL ON FUNCTION end_abandoned_analyses(double precision, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION end_abandoned_analyses(double precision, text) TO ${appRole};
