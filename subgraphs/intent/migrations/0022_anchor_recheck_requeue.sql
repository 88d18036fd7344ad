-- Anchoring leftovers (issue #27 item 9, docs/receipts.md "Anchoring"):
--   * Re-check at depth: a batch marked ANCHORED is read again once its block is
--     ANCHOR_RECHECK_DEPTH deep. Found: `confirmed`, final. Gone (a re-org dropped it): back to
--     SENDING with no transaction, so the job sends it again at the same contract positions; its
--     decision receipts go back to PENDING. Only an unconfirmed ANCHORED batch may move back.
--   * Requeue after NotWriter: the leaves of a batch the contract refused can be released (batch,
--     index and proof cleared) once, through intent.requeue_failed_batch, so that they go into a
--     later batch; the refused batch keeps its record and reason, with `requeued_at`. A leaf
--     leaves only a refused batch: a receipt is in one anchored batch at most, always.
ALTER TABLE intent.anchor_batches
  ADD COLUMN confirmed   boolean     NOT NULL DEFAULT false,
  ADD COLUMN requeued_at timestamptz,
  ADD CHECK (NOT confirmed OR state = 'ANCHORED'),
  ADD CHECK (requeued_at IS NULL OR state = 'ANCHOR_FAILED');
CREATE INDEX anchor_batches_unconfirmed ON intent.anchor_batches (batch_id)
  WHERE state = 'ANCHORED' AND NOT confirmed;

CREATE OR REPLACE FUNCTION intent.guard_anchor_batch() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' OR TG_OP = 'TRUNCATE' THEN
    RAISE EXCEPTION 'anchor batches are never deleted' USING ERRCODE = 'IN007';
  END IF;
  IF NEW.batch_id IS DISTINCT FROM OLD.batch_id OR NEW.chain IS DISTINCT FROM OLD.chain
     OR NEW.contract IS DISTINCT FROM OLD.contract OR NEW.first_seq IS DISTINCT FROM OLD.first_seq
     OR NEW.count IS DISTINCT FROM OLD.count OR NEW.root IS DISTINCT FROM OLD.root
     OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
    RAISE EXCEPTION 'anchor batch % keeps its root and positions', OLD.batch_id USING ERRCODE = 'IN007';
  END IF;
  IF OLD.confirmed AND NEW.confirmed IS DISTINCT FROM OLD.confirmed THEN
    RAISE EXCEPTION 'anchor batch % is confirmed already', OLD.batch_id USING ERRCODE = 'IN007';
  END IF;
  IF OLD.requeued_at IS NOT NULL AND NEW.requeued_at IS DISTINCT FROM OLD.requeued_at THEN
    RAISE EXCEPTION 'anchor batch % was requeued already', OLD.batch_id USING ERRCODE = 'IN007';
  END IF;
  -- An unconfirmed ANCHORED batch whose landing a re-org dropped goes back to SENDING, unlanded.
  IF OLD.state = 'ANCHORED' AND NOT OLD.confirmed AND NEW.state = 'SENDING'
     AND NEW.tx_hash IS NULL AND NEW.block_number IS NULL AND NEW.reason IS NULL THEN
    RETURN NEW;
  END IF;
  IF OLD.state <> 'SENDING' AND (NEW.state IS DISTINCT FROM OLD.state OR NEW.tx_hash IS DISTINCT FROM OLD.tx_hash
       OR NEW.block_number IS DISTINCT FROM OLD.block_number OR NEW.reason IS DISTINCT FROM OLD.reason) THEN
    RAISE EXCEPTION 'anchor batch % is % already', OLD.batch_id, OLD.state USING ERRCODE = 'IN007';
  END IF;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION intent.guard_anchor_leaf() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' OR TG_OP = 'TRUNCATE' THEN
    RAISE EXCEPTION 'anchor leaves are never deleted' USING ERRCODE = 'IN007';
  END IF;
  IF NEW.seq IS DISTINCT FROM OLD.seq OR NEW.receipt_id IS DISTINCT FROM OLD.receipt_id
     OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.enqueued_at IS DISTINCT FROM OLD.enqueued_at
     OR (OLD.digest IS NOT NULL AND NEW.digest IS DISTINCT FROM OLD.digest) THEN
    RAISE EXCEPTION 'anchor leaf % keeps its receipt and digest', OLD.receipt_id USING ERRCODE = 'IN007';
  END IF;
  IF OLD.batch_id IS NOT NULL AND (NEW.batch_id IS DISTINCT FROM OLD.batch_id
       OR NEW.leaf_index IS DISTINCT FROM OLD.leaf_index OR NEW.proof IS DISTINCT FROM OLD.proof) THEN
    -- Released from a refused batch (requeue_failed_batch), and only to no batch.
    IF NEW.batch_id IS NULL AND EXISTS (SELECT 1 FROM intent.anchor_batches b
          WHERE b.batch_id = OLD.batch_id AND b.state = 'ANCHOR_FAILED' AND b.requeued_at IS NOT NULL) THEN
      RETURN NEW;
    END IF;
    RAISE EXCEPTION 'receipt % is already in batch %; a receipt is never in two batches', OLD.receipt_id, OLD.batch_id
      USING ERRCODE = 'IN007';
  END IF;
  RETURN NEW;
END
$$;

-- Decision receipts follow their batch back: PENDING again after a re-org.
CREATE FUNCTION intent.unsettle_decision_receipts() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE intent.decision_receipts r SET state = 'PENDING'
    FROM intent.anchor_leaves l
   WHERE l.batch_id = NEW.batch_id AND l.kind = 'decision' AND r.receipt_id = l.receipt_id;
  PERFORM intent.notify_receipt_anchor(
    ARRAY(SELECT l.receipt_id FROM intent.anchor_leaves l WHERE l.batch_id = NEW.batch_id ORDER BY l.leaf_index),
    'PENDING');
  RETURN NULL;
END
$$;
CREATE TRIGGER anchor_batches_unsettle_decisions AFTER UPDATE OF state ON intent.anchor_batches
  FOR EACH ROW WHEN (OLD.state = 'ANCHORED' AND NEW.state = 'SENDING')
  EXECUTE FUNCTION intent.unsettle_decision_receipts();

-- Releases the leaves of a refused batch for a later batch; their decision receipts are PENDING
-- again. Returns how many leaves were released (0: not a refused batch, or requeued already).
CREATE FUNCTION intent.requeue_failed_batch(p_batch_id bigint) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_count integer;
BEGIN
  UPDATE intent.anchor_batches SET requeued_at = now(), updated_at = now()
   WHERE batch_id = p_batch_id AND state = 'ANCHOR_FAILED' AND requeued_at IS NULL;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  UPDATE intent.decision_receipts r SET state = 'PENDING'
    FROM intent.anchor_leaves l
   WHERE l.batch_id = p_batch_id AND l.kind = 'decision' AND r.receipt_id = l.receipt_id;
  PERFORM intent.notify_receipt_anchor(
    ARRAY(SELECT l.receipt_id FROM intent.anchor_leaves l WHERE l.batch_id = p_batch_id ORDER BY l.leaf_index),
    'PENDING');
  UPDATE intent.anchor_leaves SET batch_id = NULL, leaf_index = NULL, proof = NULL
   WHERE batch_id = p_batch_id;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_count;
END
$$;

REVOKE ALL ON FUNCTION intent.unsettle_decision_receipts() FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.requeue_failed_batch(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION intent.requeue_failed_batch(bigint) TO spend_control_service;
