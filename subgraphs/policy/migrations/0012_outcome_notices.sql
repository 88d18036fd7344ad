-- The owner is told when a consumer intent of their policy reaches an outcome (COMPLETED,
-- MANUAL_REVIEW, REFUNDED), on the same bound channels and by the same delivery job as escalation
-- notices. policy.channel_deliveries now carries two kinds of notice:
--   ESCALATION               one per escalation and binding, as before (poll_ref, the sealed code
--                            while it can still be sent, cancelled when the escalation resolves);
--   CONSUMER_INTENT_OUTCOME  one per intent state change and binding: no poll_ref, no code, and a
--                            payload with what the message says (nothing secret: no session, no
--                            signature, no code), so it is stored in the clear and kept as the record.
-- Both are claimed, retried and given up on by the same job with the same bounds.
ALTER TABLE policy.channel_deliveries
  ALTER COLUMN poll_ref DROP NOT NULL,
  -- The default keeps policy.open_escalation (0008), which names no kind, queueing escalations.
  ADD COLUMN notice_kind text NOT NULL DEFAULT 'ESCALATION'
    CHECK (notice_kind IN ('ESCALATION', 'CONSUMER_INTENT_OUTCOME')),
  ADD COLUMN policy_id numeric(78,0),
  ADD COLUMN intent_id text CHECK (intent_id ~ '^ci_[0-9a-f]{24}$'),
  -- The intent's state_version of the change notified: one notice per change and binding.
  ADD COLUMN intent_version integer CHECK (intent_version >= 1),
  ADD COLUMN outcome text CHECK (outcome IN ('COMPLETED', 'MANUAL_REVIEW', 'REFUNDED')),
  ADD COLUMN payload jsonb
    CHECK (payload IS NULL OR (jsonb_typeof(payload) = 'object' AND octet_length(payload::text) <= 8192)),
  ADD CONSTRAINT channel_deliveries_notice_shape CHECK (
    (notice_kind = 'ESCALATION' AND poll_ref IS NOT NULL AND policy_id IS NULL AND intent_id IS NULL
       AND intent_version IS NULL AND outcome IS NULL AND payload IS NULL)
    OR (notice_kind = 'CONSUMER_INTENT_OUTCOME' AND poll_ref IS NULL AND sealed_payload IS NULL
       AND policy_id IS NOT NULL AND intent_id IS NOT NULL AND intent_version IS NOT NULL
       AND outcome IS NOT NULL AND payload IS NOT NULL)),
  ADD CONSTRAINT channel_deliveries_outcome_once UNIQUE (intent_id, intent_version, binding_id);

-- Published for the intent subgraph: called in the transaction that moves a consumer intent into
-- an outcome, so the notice exists exactly when the move commits. Queues one delivery per ACTIVE
-- binding of the policy's owner whose kind the policy's escalation.channels lists (the channels
-- the owner chose for this policy's notices; default webhook), and adds to the summary what the
-- policy knows (its name and asset, for the amount's display). A policy that does not exist, or
-- an owner with no such binding, queues nothing. Idempotent per (intent, version, binding).
-- Returns how many deliveries it queued.
CREATE FUNCTION policy.enqueue_outcome_notice(
  p_policy_id text, p_intent_id text, p_intent_version integer, p_outcome text, p_summary jsonb,
  p_now timestamptz)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_policy policy.policies;
  v_queued integer;
BEGIN
  IF p_outcome IS NULL OR p_outcome NOT IN ('COMPLETED', 'MANUAL_REVIEW', 'REFUNDED') THEN
    RAISE EXCEPTION 'outcome % is not one the owner is told about', p_outcome;
  END IF;
  IF p_summary IS NULL OR jsonb_typeof(p_summary) <> 'object' THEN
    RAISE EXCEPTION 'an outcome summary is a JSON object';
  END IF;
  SELECT * INTO v_policy FROM policy.policies p
   WHERE p.policy_id = p_policy_id::numeric ORDER BY p.version DESC LIMIT 1;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  INSERT INTO policy.channel_deliveries
    (binding_id, notice_kind, policy_id, intent_id, intent_version, outcome, payload, state,
     next_attempt_at, created_at, updated_at)
  SELECT b.binding_id, 'CONSUMER_INTENT_OUTCOME', v_policy.policy_id, p_intent_id, p_intent_version, p_outcome,
         p_summary || jsonb_build_object('policyName', v_policy.rules -> 'name', 'policyAsset', v_policy.rules -> 'asset'),
         'PENDING', p_now, p_now, p_now
    FROM policy.channel_bindings b
   WHERE b.owner = v_policy.owner AND b.state = 'ACTIVE'
     AND coalesce(v_policy.rules -> 'escalation' -> 'channels', '["webhook"]'::jsonb) ? b.kind
  ON CONFLICT (intent_id, intent_version, binding_id) DO NOTHING;
  GET DIAGNOSTICS v_queued = ROW_COUNT;
  RETURN v_queued;
END
$$;

REVOKE ALL ON FUNCTION policy.enqueue_outcome_notice(text, text, integer, text, jsonb, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION policy.enqueue_outcome_notice(text, text, integer, text, jsonb, timestamptz)
  TO spend_control_service;
