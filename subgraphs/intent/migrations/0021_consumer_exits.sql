-- Every state where money waits has an exit, and what is paid is what was decided (issue #27,
-- docs/consumer.md "Where money waits"):
--
-- 1. The lifecycle (core/consumer/lifecycle.ts, compared by a test): a purchase resolved PAID from
--    the chain still needs its delivery, so MANUAL_REVIEW → DELIVERY_PENDING; and no edge from a
--    funded state to CANCELLED or REFUNDED skips the refund leg (REFUND_PENDING, where the REFUND
--    owed is booked and the worker sends it): FUNDED → CANCELLED, FAILED_BEFORE_PAYMENT → REFUNDED,
--    MANUAL_REVIEW → REFUNDED and MANUAL_REVIEW → CANCELLED go (no code ever took them).
-- 2. A decided quote is frozen: once the policy's decision is stored, the quote, its expiry, the
--    funding amount, the SpendIntent and its hash never change (IN004, 409 ILLEGAL_STATE_TRANSITION).
-- 3. trust_outcome_of: a purchase the service completed without the merchant's delivery (resolved
--    PAID from the chain, or ACCEPT_DELIVERY by an operator) counts against the vendor ('failed');
--    the counters are recounted under the new rule.

INSERT INTO intent.consumer_intent_transitions (from_state, to_state) VALUES
  ('MANUAL_REVIEW','DELIVERY_PENDING');
DELETE FROM intent.consumer_intent_transitions
 WHERE (from_state, to_state) IN (('FUNDED','CANCELLED'), ('FAILED_BEFORE_PAYMENT','REFUNDED'),
                                  ('MANUAL_REVIEW','REFUNDED'), ('MANUAL_REVIEW','CANCELLED'));

CREATE FUNCTION intent.guard_decided_quote() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF OLD.decision IS NOT NULL AND (
       NEW.quote IS DISTINCT FROM OLD.quote
       OR NEW.quote_expires_at IS DISTINCT FROM OLD.quote_expires_at
       OR NEW.funding_amount IS DISTINCT FROM OLD.funding_amount
       OR NEW.spend_intent IS DISTINCT FROM OLD.spend_intent
       OR NEW.intent_hash IS DISTINCT FROM OLD.intent_hash) THEN
    RAISE EXCEPTION 'consumer intent % was decided on its quote; the quote and SpendIntent never change',
      OLD.intent_id USING ERRCODE = 'IN004';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER consumer_intents_decided_quote BEFORE UPDATE ON intent.consumer_intents
  FOR EACH ROW EXECUTE FUNCTION intent.guard_decided_quote();

CREATE OR REPLACE FUNCTION intent.trust_outcome_of(
  p_state text, p_service_verified jsonb, p_settlement jsonb, p_resolution jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    -- Never reached the provider: blocked, expired, cancelled, failed before the merchant leg, or
    -- signed but stopped (a crash of ours) before the paid request left for the merchant.
    WHEN p_settlement IS NULL OR NOT (p_settlement ? 'requestLeftAt' OR p_settlement ? 'txHash') THEN NULL
    -- The service's own finding against the merchant (a lie caught by RDAP, nothing delivered, or
    -- a delivery the registry could not confirm within the retry bound): final once no longer
    -- DELIVERY_PENDING.
    WHEN p_service_verified ->> 'verified' = 'false' AND p_state <> 'DELIVERY_PENDING' THEN 'failed'
    WHEN p_service_verified ->> 'verified' = 'true' AND p_state IN ('DELIVERY_VERIFIED', 'COMPLETED')
      THEN 'verified'
    -- Completed without the merchant's delivery verified: paid and resolved from the chain, or
    -- accepted by an operator over an invalid or contradicted answer.
    WHEN p_resolution ->> 'outcome' IN ('PAID', 'ACCEPT_DELIVERY') AND p_state = 'COMPLETED' THEN 'failed'
    -- An ambiguous payment an admin resolved NOT_PAID from the chain (the merchant never got paid).
    WHEN p_resolution ->> 'outcome' = 'NOT_PAID' THEN 'ambiguous'
    WHEN p_state IN ('REFUND_PENDING', 'REFUNDED') THEN 'refunds'
    WHEN p_state = 'FAILED_AFTER_PAYMENT' THEN 'failed'
    ELSE NULL
  END
$$;

-- The counters under the new rule: counted again from the history (the trigger moves a purchase
-- from its old bucket to its new one, so old and new buckets must come from the same rule).
DELETE FROM intent.trust_vendor_outcomes;
DELETE FROM intent.trust_buyer_outcomes;
INSERT INTO intent.trust_vendor_outcomes (provider, verified, failed, disputed, refunds, ambiguous, first_seen_at)
SELECT provider,
       count(*) FILTER (WHERE o = 'verified'), count(*) FILTER (WHERE o = 'failed'),
       count(*) FILTER (WHERE o = 'disputed'), count(*) FILTER (WHERE o = 'refunds'),
       count(*) FILTER (WHERE o = 'ambiguous'), min(updated_at)
  FROM (SELECT provider, updated_at, intent.trust_outcome_of(state, service_verified, settlement, resolution) AS o
          FROM intent.consumer_intents) c
 WHERE o IS NOT NULL
 GROUP BY provider;
INSERT INTO intent.trust_buyer_outcomes (policy_id, agent_id, verified, failed, disputed, refunds, ambiguous, first_seen_at)
SELECT policy_id, agent_id,
       count(*) FILTER (WHERE o = 'verified'), count(*) FILTER (WHERE o = 'failed'),
       count(*) FILTER (WHERE o = 'disputed'), count(*) FILTER (WHERE o = 'refunds'),
       count(*) FILTER (WHERE o = 'ambiguous'), min(updated_at)
  FROM (SELECT policy_id, updated_at, coalesce(spend_intent ->> 'agentId', 'consumer:' || wallet) AS agent_id,
               intent.trust_outcome_of(state, service_verified, settlement, resolution) AS o
          FROM intent.consumer_intents) c
 WHERE o IS NOT NULL
 GROUP BY policy_id, agent_id;
