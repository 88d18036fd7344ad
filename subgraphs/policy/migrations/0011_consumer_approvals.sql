-- Published for the intent subgraph's consumer intents (issue #17): where an escalation stands, so
-- an intent waiting for its owner's approval can move once a channel reply, the dashboard or the
-- timeout has decided it, and the policies an owner holds, so an owner's list of consumer intents
-- spans their policies. Read-only; neither reveals more than the owner's own views already show.

-- The state of one escalation as of p_now (a PENDING one past its expiry reads EXPIRED, as the
-- poll route reads it), with the intent it binds; no row for an unknown pollRef.
CREATE FUNCTION policy.escalation_outcome(p_poll_ref text, p_now timestamptz)
RETURNS TABLE (poll_ref text, state text, intent_hash text, policy_id text, resolved_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT e.poll_ref,
         CASE WHEN e.state = 'PENDING' AND e.expires_at <= p_now THEN 'EXPIRED' ELSE e.state END,
         e.intent_hash, e.policy_id::text,
         CASE WHEN e.state = 'PENDING' AND e.expires_at <= p_now THEN e.expires_at ELSE e.resolved_at END
    FROM policy.escalations e
   WHERE e.poll_ref = p_poll_ref
$$;

-- Every policy (by id) whose latest version the address owns.
CREATE FUNCTION policy.owner_policy_ids(p_owner text)
RETURNS TABLE (policy_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT latest.policy_id::text
    FROM (SELECT DISTINCT ON (p.policy_id) p.policy_id, p.owner
            FROM policy.policies p
           ORDER BY p.policy_id, p.version DESC) latest
   WHERE latest.owner = lower(p_owner)
$$;

REVOKE ALL ON FUNCTION policy.escalation_outcome(text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION policy.owner_policy_ids(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION policy.escalation_outcome(text, timestamptz) TO spend_control_service;
GRANT EXECUTE ON FUNCTION policy.owner_policy_ids(text) TO spend_control_service;
