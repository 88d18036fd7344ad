-- Published for other subgraphs (the ledger scopes an owner's view of the money with it): the
-- owner of a policy's latest version, or NULL for an unknown or malformed id. Read-only, and the
-- only thing it reveals is what the policy entity already shows its owner.
CREATE FUNCTION policy.policy_owner(p_policy_id text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT p.owner
    FROM policy.policies p
   WHERE p.policy_id = CASE WHEN char_length(p_policy_id) <= 78 AND p_policy_id ~ '^[0-9]+$'
                            THEN p_policy_id::numeric END
   ORDER BY p.version DESC
   LIMIT 1
$$;
