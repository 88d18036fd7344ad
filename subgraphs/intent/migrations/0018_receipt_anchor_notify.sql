-- Live anchor state (issue #19 item 4, docs/receipts.md "Following anchors live"): every change of
-- a receipt's anchor state is published with pg_notify('receipt_anchor', …), so it reaches the
-- gateway's subscribers on commit only (a rolled-back batch is never seen). Changes are:
--   * a consumer receipt queued for anchoring (a leaf inserted): PENDING. Decision receipts are
--     queued by every preflight, the service's hottest path: a NOTIFY each (commits that NOTIFY
--     serialise on the notify queue) cost preflight throughput by more than half in bench:preflight,
--     so they are announced only when their batch settles; a subscriber to one receipt still gets
--     its PENDING as the first message (the current state);
--   * its batch landing or refused (SENDING -> ANCHORED | ANCHOR_FAILED): one NOTIFY per receipt
--     of the batch, in the transaction that marks the batch.
-- A batch being closed (a leaf given its batch while SENDING) changes nothing a reader sees.
-- The payload is ids and a state, ~250 bytes, far below NOTIFY's 8000-byte cap:
--   {receiptId, policyId, owner, state}
-- policyId: a decision receipt's decision's policy, a consumer receipt's intent's policy (intent
-- tables); owner: policy.policy_owner (the published function), so the gateway drops another
-- owner's events per event without a read. Subscribers read the anchor object afresh; the payload
-- is only a pointer. Runs as the owner (SECURITY DEFINER) like the enqueueing triggers of 0017.
-- PL/pgSQL with PERFORM: every row is evaluated (a SQL function returning void may stop at the first).
CREATE FUNCTION intent.notify_receipt_anchor(p_receipt_ids text[], p_state text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM pg_notify('receipt_anchor', json_build_object(
            'receiptId', s.receipt_id, 'policyId', s.policy_id,
            'owner', CASE WHEN s.policy_id IS NULL THEN NULL ELSE policy.policy_owner(s.policy_id) END,
            'state', p_state)::text)
     FROM (SELECT ids.receipt_id, ids.ord, COALESCE(d.policy_id, i.policy_id::text) AS policy_id
             FROM unnest(p_receipt_ids) WITH ORDINALITY AS ids(receipt_id, ord)
             LEFT JOIN intent.decision_receipts r ON r.receipt_id = ids.receipt_id
             LEFT JOIN intent.decisions d ON d.decision_id = r.decision_id
             LEFT JOIN intent.consumer_receipts c ON c.receipt_id = ids.receipt_id
             LEFT JOIN intent.consumer_intents i ON i.intent_id = c.intent_id
            ORDER BY ids.ord) s;
END
$$;

CREATE FUNCTION intent.notify_anchor_leaf_queued() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM intent.notify_receipt_anchor(ARRAY[NEW.receipt_id], 'PENDING');
  RETURN NULL;
END
$$;
CREATE TRIGGER anchor_leaves_notify_queued AFTER INSERT ON intent.anchor_leaves
  FOR EACH ROW WHEN (NEW.kind = 'consumer') EXECUTE FUNCTION intent.notify_anchor_leaf_queued();

CREATE FUNCTION intent.notify_anchor_batch_settled() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM intent.notify_receipt_anchor(
    ARRAY(SELECT l.receipt_id FROM intent.anchor_leaves l WHERE l.batch_id = NEW.batch_id ORDER BY l.leaf_index),
    NEW.state);
  RETURN NULL;
END
$$;
CREATE TRIGGER anchor_batches_notify_settled AFTER UPDATE OF state ON intent.anchor_batches
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state AND NEW.state IN ('ANCHORED', 'ANCHOR_FAILED'))
  EXECUTE FUNCTION intent.notify_anchor_batch_settled();

REVOKE ALL ON FUNCTION intent.notify_receipt_anchor(text[], text) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.notify_anchor_leaf_queued() FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.notify_anchor_batch_settled() FROM PUBLIC;
