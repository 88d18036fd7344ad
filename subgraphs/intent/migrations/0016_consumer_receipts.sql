-- Consumer receipts (DECISIONS "Receipts", docs/receipts.md "Consumer receipts"): one public receipt
-- per consumer intent, from the moment its funding leg is recorded. The body (the allow-listed
-- public JSON, core/consumer/receipt.ts) and its digest are written by the service in the same
-- transaction as the intent change that changes them (subgraphs/intent/consumer/store.ts calls
-- refreshReceipt after every successful compare-and-set). The database holds the rest:
--   * a receipt is never deleted (IN006), and once its intent is terminal it is final: nothing in
--     it changes again but its anchor object (issue #19 records the anchoring there; the digest
--     does not cover the anchor);
--   * a deferred check at COMMIT refuses any transaction that leaves a funded intent without a
--     receipt, or with a non-final receipt of another state or updated_at than the intent's
--     (IN006), so no writer can change an intent and forget its receipt.
-- seq is the order receipts were first written: the order anchoring batches them in.

CREATE TABLE intent.consumer_receipts (
  receipt_id        text          PRIMARY KEY CHECK (receipt_id ~ '^0x[0-9a-f]{64}$'),
  intent_id         text          NOT NULL UNIQUE REFERENCES intent.consumer_intents (intent_id),
  seq               bigint        GENERATED ALWAYS AS IDENTITY UNIQUE,
  -- The public body exactly as GET /consumer/receipt/:intentId answers it, integrity included.
  body              jsonb         NOT NULL CHECK (jsonb_typeof(body) = 'object'),
  digest            text          NOT NULL CHECK (digest ~ '^0x[0-9a-f]{64}$'),
  -- What the body was built from: the intent's state and updated_at at the write.
  intent_state      text          NOT NULL,
  intent_updated_at timestamptz   NOT NULL,
  final             boolean       GENERATED ALWAYS AS
                      (intent_state IN ('BLOCKED','COMPLETED','REFUNDED','EXPIRED','CANCELLED')) STORED,
  first_written_at  timestamptz   NOT NULL DEFAULT now(),
  written_at        timestamptz   NOT NULL DEFAULT now(),
  CHECK (body->>'intentId' = intent_id),
  CHECK (body->>'state' = intent_state),
  CHECK (body->'integrity'->>'digest' = digest),
  CHECK (body->'anchor'->>'receiptId' = receipt_id)
);

CREATE FUNCTION intent.guard_consumer_receipt() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' OR TG_OP = 'TRUNCATE' THEN
    RAISE EXCEPTION 'consumer receipts are never deleted' USING ERRCODE = 'IN006';
  END IF;
  IF NEW.receipt_id IS DISTINCT FROM OLD.receipt_id OR NEW.intent_id IS DISTINCT FROM OLD.intent_id
     OR NEW.first_written_at IS DISTINCT FROM OLD.first_written_at THEN
    RAISE EXCEPTION 'consumer receipt % keeps its id and intent', OLD.receipt_id USING ERRCODE = 'IN006';
  END IF;
  IF OLD.final AND ((NEW.body - 'anchor') IS DISTINCT FROM (OLD.body - 'anchor')
       OR NEW.digest IS DISTINCT FROM OLD.digest OR NEW.intent_state IS DISTINCT FROM OLD.intent_state
       OR NEW.intent_updated_at IS DISTINCT FROM OLD.intent_updated_at) THEN
    RAISE EXCEPTION 'consumer receipt % is final: its intent is %', OLD.receipt_id, OLD.intent_state
      USING ERRCODE = 'IN006';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER consumer_receipts_guard BEFORE UPDATE OR DELETE ON intent.consumer_receipts
  FOR EACH ROW EXECUTE FUNCTION intent.guard_consumer_receipt();
CREATE TRIGGER consumer_receipts_no_truncate BEFORE TRUNCATE ON intent.consumer_receipts
  FOR EACH STATEMENT EXECUTE FUNCTION intent.guard_consumer_receipt();

-- At COMMIT, for every intent row changed with a funding leg (before or after): its receipt is
-- there and current (or final). Reads the rows as they are at COMMIT, not as the UPDATE left them.
CREATE FUNCTION intent.check_consumer_receipt() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  intent intent.consumer_intents%ROWTYPE;
  receipt intent.consumer_receipts%ROWTYPE;
BEGIN
  SELECT * INTO intent FROM intent.consumer_intents WHERE intent_id = NEW.intent_id;
  SELECT * INTO receipt FROM intent.consumer_receipts WHERE intent_id = NEW.intent_id;
  IF receipt.receipt_id IS NULL THEN
    IF intent.funding IS NULL THEN
      RETURN NULL;
    END IF;
    RAISE EXCEPTION 'consumer intent % is funded but has no receipt', NEW.intent_id
      USING ERRCODE = 'IN006';
  END IF;
  IF NOT receipt.final AND (receipt.intent_state IS DISTINCT FROM intent.state
       OR receipt.intent_updated_at IS DISTINCT FROM intent.updated_at) THEN
    RAISE EXCEPTION 'the receipt of consumer intent % was not written with its change (receipt %/%, intent %/%)',
      NEW.intent_id, receipt.intent_state, receipt.intent_updated_at, intent.state, intent.updated_at
      USING ERRCODE = 'IN006';
  END IF;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER consumer_intents_receipt_current
  AFTER UPDATE ON intent.consumer_intents DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.funding IS NOT NULL OR OLD.funding IS NOT NULL)
  EXECUTE FUNCTION intent.check_consumer_receipt();

GRANT SELECT, INSERT, UPDATE ON intent.consumer_receipts TO spend_control_service;
