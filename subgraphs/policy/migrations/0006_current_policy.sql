-- Published for the intent subgraph (it evaluates intents against the policy inside its own
-- transaction): the latest version of a policy, or no row for an unknown or malformed id.
-- status is the stored ACTIVE/PAUSED; EXPIRED is the caller's to derive from expires_at.
CREATE FUNCTION policy.current_policy(p_policy_id text)
RETURNS TABLE (id text, version integer, owner text, status text, policy_hash text, rules jsonb, expires_at timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT p.policy_id::text, p.version, p.owner, p.status, p.policy_hash, p.rules, p.expires_at
    FROM policy.policies p
   WHERE p.policy_id = CASE WHEN char_length(p_policy_id) <= 78 AND p_policy_id ~ '^[0-9]+$'
                            THEN p_policy_id::numeric END
   ORDER BY p.version DESC
   LIMIT 1
$$;
