-- The window's three sums for the read-side tools (get_ledger, detect_duplicate), from the running
-- totals of migration 0005 exactly as intent.preflight_window reads them: settled and reserved
-- from intent.policy_day_totals less the ACTIVE reservations already past their deadline, the
-- hour's calls from intent.policy_call_minutes plus the boundary minute's later calls. Before,
-- the tools summed every reservation of the day and every call of the hour, and looked up the last
-- approval per provider over the policy's whole history (which neither tool uses): a busy policy's
-- get_ledger cost grew all day. No lock: a read, not a decision.
-- intent/preflightCalls.test.ts holds this, preflight_window and the raw sums to the same values
-- around minute, hour and deadline boundaries.

CREATE FUNCTION intent.window_sums(p_policy_id text, p_day date, p_now timestamptz)
RETURNS TABLE (settled text, reserved text, calls bigint)
LANGUAGE sql STABLE AS $$
  SELECT coalesce(t.consumed, 0)::text,
         (coalesce(t.active, 0)
          - (SELECT coalesce(sum(r.amount), 0)
               FROM intent.reservations r
              WHERE r.policy_id = p_policy_id AND r.day = p_day AND r.state = 'ACTIVE' AND r.expires_at <= p_now))::text,
         (SELECT coalesce(sum(m.calls), 0)
            FROM intent.policy_call_minutes m
           WHERE m.policy_id = p_policy_id AND m.minute > intent.call_minute(p_now - interval '1 hour'))::bigint
         + (SELECT count(*)
              FROM intent.approved_calls a
             WHERE a.policy_id = p_policy_id
               AND a.approved_at > p_now - interval '1 hour'
               AND a.approved_at < intent.call_minute(p_now - interval '1 hour') + interval '1 minute')
    FROM (SELECT 1) one
    LEFT JOIN intent.policy_day_totals t ON t.policy_id = p_policy_id AND t.day = p_day
$$;
