-- policy.escalation_approval runs once per preflight. As a SECURITY DEFINER function in SQL it
-- could not be inlined and PostgreSQL planned its query again on every call (~60-70 µs, a fifth of
-- the window read); in PL/pgSQL the plan is prepared once per connection. Same query, same answer.
CREATE OR REPLACE FUNCTION policy.escalation_approval(p_intent_hash text) RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN (SELECT e.poll_ref FROM policy.escalations e
           WHERE e.intent_hash = p_intent_hash AND e.state = 'APPROVED' AND e.approval_used_at IS NULL
           ORDER BY e.resolved_at, e.poll_ref
           LIMIT 1);
END
$$;
