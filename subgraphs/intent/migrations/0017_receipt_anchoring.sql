-- Receipt anchoring (issue #19, docs/receipts.md "Anchoring"): every receipt to publish gets one
-- leaf row, in an append-only sequence; the anchoring job groups leaves into batches, records a
-- batch with its Merkle root and each leaf's audit path BEFORE it sends the one transaction, and
-- marks the batch ANCHORED (tx hash, block) or ANCHOR_FAILED (the contract's reason) afterwards.
--   * A leaf is enqueued by the database itself: a decision receipt when it is inserted (its digest
--     is filled in by the job: keccak256 of the JCS of the public decision receipt body, which SQL
--     cannot hash), a consumer receipt when it becomes final (its stored digest: a non-final
--     receipt is still rewritten, and a leaf must never go stale).
--   * A leaf belongs to at most one batch, set once with its index and proof (IN007 otherwise);
--     its digest is set once. Leaves and batches are never deleted.
--   * A batch's root, contract positions and leaves never change; its state moves only
--     SENDING -> ANCHORED | ANCHOR_FAILED, once. first_seq is the contract's own position
--     (ReceiptAnchor.nextSeq() when the batch was closed), so a batch can land at most once.
CREATE TABLE intent.anchor_batches (
  batch_id      bigint        GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  chain         text          NOT NULL CHECK (chain ~ '^eip155:[0-9]+$'),
  contract      text          NOT NULL CHECK (contract ~ '^0x[0-9a-f]{40}$'),
  first_seq     numeric(20,0) NOT NULL CHECK (first_seq >= 0),
  count         integer       NOT NULL CHECK (count > 0),
  root          text          NOT NULL UNIQUE CHECK (root ~ '^0x[0-9a-f]{64}$'),
  state         text          NOT NULL DEFAULT 'SENDING' CHECK (state IN ('SENDING', 'ANCHORED', 'ANCHOR_FAILED')),
  tx_hash       text          CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  block_number  bigint        CHECK (block_number >= 0),
  reason        text,
  created_at    timestamptz   NOT NULL DEFAULT now(),
  updated_at    timestamptz   NOT NULL DEFAULT now(),
  CHECK (state <> 'ANCHORED' OR (tx_hash IS NOT NULL AND block_number IS NOT NULL)),
  CHECK (state <> 'ANCHOR_FAILED' OR reason IS NOT NULL)
);
-- One batch per contract position: a second batch at an anchored position cannot be recorded.
CREATE UNIQUE INDEX anchor_batches_position ON intent.anchor_batches (chain, contract, first_seq)
  WHERE state <> 'ANCHOR_FAILED';
CREATE INDEX anchor_batches_sending ON intent.anchor_batches (batch_id) WHERE state = 'SENDING';

CREATE TABLE intent.anchor_leaves (
  seq          bigint       GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  receipt_id   text         NOT NULL UNIQUE CHECK (receipt_id ~ '^0x[0-9a-f]{64}$'),
  kind         text         NOT NULL CHECK (kind IN ('decision', 'consumer')),
  -- The 32 bytes after the receipt id in the leaf; null only for a decision receipt not hashed yet.
  digest       text         CHECK (digest ~ '^0x[0-9a-f]{64}$'),
  enqueued_at  timestamptz  NOT NULL DEFAULT clock_timestamp(),
  batch_id     bigint       REFERENCES intent.anchor_batches (batch_id),
  leaf_index   integer      CHECK (leaf_index >= 0),
  -- The RFC 6962 audit path, bottom-up, 0x-hex siblings.
  proof        jsonb        CHECK (jsonb_typeof(proof) = 'array'),
  CHECK ((batch_id IS NULL) = (leaf_index IS NULL) AND (batch_id IS NULL) = (proof IS NULL)),
  CHECK (batch_id IS NULL OR digest IS NOT NULL),
  UNIQUE (batch_id, leaf_index)
);
CREATE INDEX anchor_leaves_unbatched ON intent.anchor_leaves (seq) WHERE batch_id IS NULL;
CREATE INDEX anchor_leaves_unhashed ON intent.anchor_leaves (seq) WHERE digest IS NULL;

CREATE FUNCTION intent.guard_anchor_leaf() RETURNS trigger
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
    RAISE EXCEPTION 'receipt % is already in batch %; a receipt is never in two batches', OLD.receipt_id, OLD.batch_id
      USING ERRCODE = 'IN007';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER anchor_leaves_guard BEFORE UPDATE OR DELETE ON intent.anchor_leaves
  FOR EACH ROW EXECUTE FUNCTION intent.guard_anchor_leaf();
CREATE TRIGGER anchor_leaves_no_truncate BEFORE TRUNCATE ON intent.anchor_leaves
  FOR EACH STATEMENT EXECUTE FUNCTION intent.guard_anchor_leaf();

CREATE FUNCTION intent.guard_anchor_batch() RETURNS trigger
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
  IF OLD.state <> 'SENDING' AND (NEW.state IS DISTINCT FROM OLD.state OR NEW.tx_hash IS DISTINCT FROM OLD.tx_hash
       OR NEW.block_number IS DISTINCT FROM OLD.block_number OR NEW.reason IS DISTINCT FROM OLD.reason) THEN
    RAISE EXCEPTION 'anchor batch % is % already', OLD.batch_id, OLD.state USING ERRCODE = 'IN007';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER anchor_batches_guard BEFORE UPDATE OR DELETE ON intent.anchor_batches
  FOR EACH ROW EXECUTE FUNCTION intent.guard_anchor_batch();
CREATE TRIGGER anchor_batches_no_truncate BEFORE TRUNCATE ON intent.anchor_batches
  FOR EACH STATEMENT EXECUTE FUNCTION intent.guard_anchor_batch();

-- The anchor object of a leaf (docs/receipts.md "The five states"); b is the NULL row when the leaf
-- is in no batch yet. Reads answer it, and the job writes it into a final consumer receipt's body.
CREATE FUNCTION intent.anchor_object(l intent.anchor_leaves, b intent.anchor_batches) RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE
    WHEN b.batch_id IS NULL OR b.state = 'SENDING' THEN
      jsonb_build_object('state', 'PENDING', 'receiptId', l.receipt_id)
    WHEN b.state = 'ANCHOR_FAILED' THEN
      jsonb_build_object('state', 'ANCHOR_FAILED', 'receiptId', l.receipt_id, 'reason', b.reason)
    ELSE
      jsonb_build_object('state', 'ANCHORED', 'receiptId', l.receipt_id, 'txHash', b.tx_hash,
        'blockNumber', b.block_number, 'batchRoot', b.root,
        'proof', jsonb_build_object('digest', l.digest, 'index', l.leaf_index, 'treeSize', b.count, 'path', l.proof),
        'chain', b.chain, 'contract', b.contract)
  END
$$;

-- Enqueueing runs as the owner (SECURITY DEFINER): the service never inserts leaves itself.
-- Decision receipts are issued by every preflight, the service's hottest path: a leaf row per
-- preflight cost about a quarter of bench:preflight's throughput, so the anchoring job queues them
-- in bulk instead, each round, in the order they were issued and with their issue time (so the
-- batch timer and the latency count from the receipt, not from the queueing). The ones still to
-- queue are found through a small partial index: a decision receipt leaves state PENDING when its
-- batch settles (the trigger below), so the index holds only what is not anchored yet.
CREATE INDEX decision_receipts_unanchored ON intent.decision_receipts (created_at, decision_id)
  WHERE state = 'PENDING';
CREATE FUNCTION intent.enqueue_decision_receipts(p_limit integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_count integer;
BEGIN
  INSERT INTO intent.anchor_leaves (receipt_id, kind, enqueued_at)
  SELECT r.receipt_id, 'decision', r.created_at
    FROM intent.decision_receipts r
   WHERE r.state = 'PENDING'
     AND NOT EXISTS (SELECT 1 FROM intent.anchor_leaves l WHERE l.receipt_id = r.receipt_id)
   ORDER BY r.created_at, r.decision_id
   LIMIT p_limit
  ON CONFLICT (receipt_id) DO NOTHING;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_count;
END
$$;
-- A settled batch settles its decision receipts' own state too (off the preflight path).
CREATE FUNCTION intent.settle_decision_receipts() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE intent.decision_receipts r SET state = NEW.state
    FROM intent.anchor_leaves l
   WHERE l.batch_id = NEW.batch_id AND l.kind = 'decision' AND r.receipt_id = l.receipt_id
     AND r.state = 'PENDING';
  RETURN NULL;
END
$$;
CREATE TRIGGER anchor_batches_settle_decisions AFTER UPDATE OF state ON intent.anchor_batches
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state AND NEW.state IN ('ANCHORED', 'ANCHOR_FAILED'))
  EXECUTE FUNCTION intent.settle_decision_receipts();

CREATE FUNCTION intent.enqueue_consumer_receipt() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO intent.anchor_leaves (receipt_id, kind, digest) VALUES (NEW.receipt_id, 'consumer', NEW.digest)
  ON CONFLICT (receipt_id) DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER consumer_receipts_anchor_insert AFTER INSERT ON intent.consumer_receipts
  FOR EACH ROW WHEN (NEW.final) EXECUTE FUNCTION intent.enqueue_consumer_receipt();
CREATE TRIGGER consumer_receipts_anchor_final AFTER UPDATE ON intent.consumer_receipts
  FOR EACH ROW WHEN (NEW.final AND NOT OLD.final) EXECUTE FUNCTION intent.enqueue_consumer_receipt();

-- Receipts issued before this migration: decision receipts in the order they were issued, then
-- consumer receipts already final, in the order they were first written.
INSERT INTO intent.anchor_leaves (receipt_id, kind)
  SELECT receipt_id, 'decision' FROM intent.decision_receipts ORDER BY created_at, decision_id;
INSERT INTO intent.anchor_leaves (receipt_id, kind, digest)
  SELECT receipt_id, 'consumer', digest FROM intent.consumer_receipts WHERE final ORDER BY seq;

GRANT SELECT, UPDATE ON intent.anchor_leaves TO spend_control_service;
GRANT SELECT, INSERT, UPDATE ON intent.anchor_batches TO spend_control_service;
REVOKE ALL ON FUNCTION intent.enqueue_decision_receipts(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION intent.enqueue_decision_receipts(integer) TO spend_control_service;
REVOKE ALL ON FUNCTION intent.settle_decision_receipts() FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.enqueue_consumer_receipt() FROM PUBLIC;
