-- Consumer intents (DECISIONS "Consumer intents"): a purchase a consumer session asks for, from
-- the merchant's quote through the policy, the owner's approval, funding on the funding rail and
-- the merchant's payment on its own rail. The lifecycle table lives here as data, seeded from
-- core/consumer/lifecycle.ts (a test compares the two), and a trigger refuses any state change it
-- does not list (IN004, answered 409 ILLEGAL_STATE_TRANSITION), whoever writes the UPDATE. Every
-- state change writes one outbox row `consumer_intent.state_changed` in the same transaction and
-- NOTIFYs `consumer_intent` (delivered on commit only). policy_id refers to policy.policies by
-- value only (no cross-schema foreign key).

CREATE TABLE intent.consumer_intent_transitions (
  from_state text NOT NULL,
  to_state   text NOT NULL,
  PRIMARY KEY (from_state, to_state)
);
INSERT INTO intent.consumer_intent_transitions (from_state, to_state) VALUES
  ('CREATED','DISCOVERING'), ('CREATED','QUOTED'), ('CREATED','FAILED_BEFORE_PAYMENT'), ('CREATED','CANCELLED'), ('CREATED','EXPIRED'),
  ('DISCOVERING','QUOTED'), ('DISCOVERING','FAILED_BEFORE_PAYMENT'), ('DISCOVERING','CANCELLED'), ('DISCOVERING','EXPIRED'),
  ('QUOTED','POLICY_CHECKING'), ('QUOTED','FAILED_BEFORE_PAYMENT'), ('QUOTED','CANCELLED'), ('QUOTED','EXPIRED'),
  ('POLICY_CHECKING','BLOCKED'), ('POLICY_CHECKING','AWAITING_APPROVAL'), ('POLICY_CHECKING','APPROVED'), ('POLICY_CHECKING','FAILED_BEFORE_PAYMENT'), ('POLICY_CHECKING','CANCELLED'), ('POLICY_CHECKING','EXPIRED'),
  ('AWAITING_APPROVAL','APPROVED'), ('AWAITING_APPROVAL','BLOCKED'), ('AWAITING_APPROVAL','FAILED_BEFORE_PAYMENT'), ('AWAITING_APPROVAL','CANCELLED'), ('AWAITING_APPROVAL','EXPIRED'),
  ('APPROVED','AWAITING_FUNDING'), ('APPROVED','FAILED_BEFORE_PAYMENT'), ('APPROVED','CANCELLED'), ('APPROVED','EXPIRED'),
  ('AWAITING_FUNDING','FUNDED'), ('AWAITING_FUNDING','FAILED_BEFORE_PAYMENT'), ('AWAITING_FUNDING','CANCELLED'), ('AWAITING_FUNDING','EXPIRED'),
  ('FUNDED','EXECUTION_QUEUED'), ('FUNDED','AWAITING_FUNDING'), ('FUNDED','FAILED_BEFORE_PAYMENT'), ('FUNDED','REFUND_PENDING'), ('FUNDED','CANCELLED'),
  ('EXECUTION_QUEUED','PROVIDER_PAYMENT_PENDING'), ('EXECUTION_QUEUED','FAILED_BEFORE_PAYMENT'), ('EXECUTION_QUEUED','MANUAL_REVIEW'),
  ('PROVIDER_PAYMENT_PENDING','PROVIDER_PAID'), ('PROVIDER_PAYMENT_PENDING','FAILED_AFTER_PAYMENT'), ('PROVIDER_PAYMENT_PENDING','MANUAL_REVIEW'),
  ('PROVIDER_PAID','PROVIDER_ACKNOWLEDGED'), ('PROVIDER_PAID','FAILED_AFTER_PAYMENT'), ('PROVIDER_PAID','MANUAL_REVIEW'),
  ('PROVIDER_ACKNOWLEDGED','DELIVERY_PENDING'), ('PROVIDER_ACKNOWLEDGED','DELIVERY_VERIFIED'), ('PROVIDER_ACKNOWLEDGED','FAILED_AFTER_PAYMENT'), ('PROVIDER_ACKNOWLEDGED','MANUAL_REVIEW'),
  ('DELIVERY_PENDING','DELIVERY_VERIFIED'), ('DELIVERY_PENDING','FAILED_AFTER_PAYMENT'), ('DELIVERY_PENDING','MANUAL_REVIEW'),
  ('DELIVERY_VERIFIED','COMPLETED'), ('DELIVERY_VERIFIED','MANUAL_REVIEW'),
  ('FAILED_BEFORE_PAYMENT','REFUND_PENDING'), ('FAILED_BEFORE_PAYMENT','REFUNDED'), ('FAILED_BEFORE_PAYMENT','MANUAL_REVIEW'),
  ('FAILED_AFTER_PAYMENT','REFUND_PENDING'), ('FAILED_AFTER_PAYMENT','MANUAL_REVIEW'),
  ('REFUND_PENDING','REFUNDED'), ('REFUND_PENDING','MANUAL_REVIEW'),
  ('MANUAL_REVIEW','COMPLETED'), ('MANUAL_REVIEW','REFUND_PENDING'), ('MANUAL_REVIEW','REFUNDED'), ('MANUAL_REVIEW','FAILED_AFTER_PAYMENT'), ('MANUAL_REVIEW','CANCELLED');

CREATE TABLE intent.consumer_intents (
  intent_id        text          PRIMARY KEY CHECK (intent_id ~ '^ci_[0-9a-f]{24}$'),
  policy_id        numeric(78,0) NOT NULL CHECK (policy_id >= 0),
  -- The consumer session's wallet (lowercase): who asked, and who is refunded.
  wallet           text          NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  capability       text          NOT NULL CHECK (length(capability) BETWEEN 1 AND 64),
  provider         text          NOT NULL CHECK (length(provider) BETWEEN 1 AND 253),
  category         text          NOT NULL CHECK (category ~ '^[a-z0-9.-]{1,64}$'),
  params           jsonb         NOT NULL CHECK (jsonb_typeof(params) = 'object'),
  idempotency_key  text          CHECK (length(idempotency_key) BETWEEN 1 AND 128),
  state            text          NOT NULL DEFAULT 'CREATED',
  -- Bumped by every state change: the compare-and-set token clients and jobs may hold.
  state_version    integer       NOT NULL DEFAULT 1 CHECK (state_version >= 1),
  -- Why the intent is where it is, for the states that need one (BLOCKED, FAILED_*, MANUAL_REVIEW…).
  state_reason     text          CHECK (length(state_reason) <= 1000),
  -- The quote, from the merchant's own 402 (null until QUOTED).
  quote            jsonb         CHECK (quote IS NULL OR jsonb_typeof(quote) = 'object'),
  quote_expires_at timestamptz,
  funding_amount   numeric(78,0) CHECK (funding_amount > 0),
  -- The SpendIntent the engine decided, its EIP-712 hash and the decision (null until POLICY_CHECKING ends).
  spend_intent     jsonb         CHECK (spend_intent IS NULL OR jsonb_typeof(spend_intent) = 'object'),
  intent_hash      text          CHECK (intent_hash ~ '^0x[0-9a-f]{64}$'),
  decision         jsonb         CHECK (decision IS NULL OR jsonb_typeof(decision) = 'object'),
  poll_ref         text          CHECK (poll_ref ~ '^esc_[0-9a-f]{24}$'),
  reservation_id   text          CHECK (reservation_id ~ '^rsv_[0-9a-f]{24}$'),
  -- The funding leg on the funding rail (eip155:196).
  funding          jsonb         CHECK (funding IS NULL OR jsonb_typeof(funding) = 'object'),
  -- The settlement leg on the merchant's rail (eip155:8453): authorization, transaction, answer.
  settlement       jsonb         CHECK (settlement IS NULL OR jsonb_typeof(settlement) = 'object'),
  provider_attested jsonb        CHECK (provider_attested IS NULL OR jsonb_typeof(provider_attested) = 'object'),
  -- A refund on the funding rail, and an admin's resolution of an ambiguous payment.
  refund           jsonb         CHECK (refund IS NULL OR jsonb_typeof(refund) = 'object'),
  resolution       jsonb         CHECK (resolution IS NULL OR jsonb_typeof(resolution) = 'object'),
  created_at       timestamptz   NOT NULL,
  updated_at       timestamptz   NOT NULL,
  CONSTRAINT consumer_intents_state_known CHECK (state IN (
    'CREATED','DISCOVERING','QUOTED','POLICY_CHECKING','AWAITING_APPROVAL','APPROVED','AWAITING_FUNDING',
    'FUNDED','EXECUTION_QUEUED','PROVIDER_PAYMENT_PENDING','PROVIDER_PAID','PROVIDER_ACKNOWLEDGED',
    'DELIVERY_PENDING','DELIVERY_VERIFIED','FAILED_BEFORE_PAYMENT','FAILED_AFTER_PAYMENT','REFUND_PENDING',
    'MANUAL_REVIEW','BLOCKED','COMPLETED','REFUNDED','EXPIRED','CANCELLED'))
);
-- Same idempotency key on one policy → the same intent.
CREATE UNIQUE INDEX consumer_intents_idempotency ON intent.consumer_intents (policy_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- Cursor paging of one policy's intents, newest first.
CREATE INDEX consumer_intents_policy ON intent.consumer_intents (policy_id, created_at DESC, intent_id DESC);
-- The jobs look for intents in a few states only.
CREATE INDEX consumer_intents_open ON intent.consumer_intents (state, updated_at)
  WHERE state IN ('AWAITING_APPROVAL','APPROVED','AWAITING_FUNDING','FUNDED','EXECUTION_QUEUED',
                  'PROVIDER_PAYMENT_PENDING','PROVIDER_PAID','PROVIDER_ACKNOWLEDGED',
                  'FAILED_BEFORE_PAYMENT','REFUND_PENDING','MANUAL_REVIEW');

-- The outbox: one row per state change, written by the trigger below in the same transaction.
-- Owner webhooks (a later issue) deliver from here at least once; receivers deduplicate by event_id.
CREATE TABLE intent.consumer_intent_events (
  event_id     bigint        GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  intent_id    text          NOT NULL REFERENCES intent.consumer_intents (intent_id),
  policy_id    numeric(78,0) NOT NULL,
  type         text          NOT NULL CHECK (type = 'consumer_intent.state_changed'),
  from_state   text,
  to_state     text          NOT NULL,
  state_version integer      NOT NULL,
  reason       text,
  occurred_at  timestamptz   NOT NULL,
  published_at timestamptz
);
CREATE INDEX consumer_intent_events_intent ON intent.consumer_intent_events (intent_id, event_id);
CREATE INDEX consumer_intent_events_unpublished ON intent.consumer_intent_events (event_id)
  WHERE published_at IS NULL;

-- The lifecycle in the database: a state change must be listed; what the intent is (policy,
-- wallet, capability, params, key, creation) never changes; the version moves by one per change.
CREATE FUNCTION intent.guard_consumer_intent() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.state <> 'CREATED' OR NEW.state_version <> 1 THEN
      RAISE EXCEPTION 'consumer intent % must be born CREATED at version 1', NEW.intent_id
        USING ERRCODE = 'IN004';
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.intent_id IS DISTINCT FROM OLD.intent_id OR NEW.policy_id IS DISTINCT FROM OLD.policy_id
     OR NEW.wallet IS DISTINCT FROM OLD.wallet OR NEW.capability IS DISTINCT FROM OLD.capability
     OR NEW.params IS DISTINCT FROM OLD.params OR NEW.idempotency_key IS DISTINCT FROM OLD.idempotency_key
     OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
    RAISE EXCEPTION 'consumer intent % keeps what it is; only its progress changes', OLD.intent_id
      USING ERRCODE = 'IN004';
  END IF;
  IF NEW.state IS DISTINCT FROM OLD.state THEN
    IF NOT EXISTS (SELECT 1 FROM intent.consumer_intent_transitions t
                    WHERE t.from_state = OLD.state AND t.to_state = NEW.state) THEN
      RAISE EXCEPTION 'a consumer intent cannot move from % to %', OLD.state, NEW.state
        USING ERRCODE = 'IN004';
    END IF;
    IF NEW.state_version <> OLD.state_version + 1 THEN
      RAISE EXCEPTION 'consumer intent % state change must bump state_version by one', OLD.intent_id
        USING ERRCODE = 'IN004';
    END IF;
  ELSIF NEW.state_version IS DISTINCT FROM OLD.state_version THEN
    RAISE EXCEPTION 'consumer intent % state_version moves only with its state', OLD.intent_id
      USING ERRCODE = 'IN004';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER consumer_intents_guard BEFORE INSERT OR UPDATE ON intent.consumer_intents
  FOR EACH ROW EXECUTE FUNCTION intent.guard_consumer_intent();

CREATE FUNCTION intent.consumer_intent_outbox() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.state IS NOT DISTINCT FROM OLD.state THEN
    RETURN NULL;
  END IF;
  INSERT INTO intent.consumer_intent_events
    (intent_id, policy_id, type, from_state, to_state, state_version, reason, occurred_at)
  VALUES (NEW.intent_id, NEW.policy_id, 'consumer_intent.state_changed',
          CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END, NEW.state, NEW.state_version,
          NEW.state_reason, NEW.updated_at);
  -- Ids and states only: far below NOTIFY's 8000-byte cap.
  PERFORM pg_notify('consumer_intent', json_build_object(
    'intentId', NEW.intent_id, 'policyId', NEW.policy_id::text, 'state', NEW.state,
    'version', NEW.state_version)::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER consumer_intents_outbox AFTER INSERT OR UPDATE ON intent.consumer_intents
  FOR EACH ROW EXECUTE FUNCTION intent.consumer_intent_outbox();

-- PaymentCapabilities (core/consumer/paymentCapability.ts): one intent, one asset, one ceiling,
-- one recipient allowlist, 5 minutes; redeemed at most once (redeemed_at set under a row lock);
-- the EIP-3009 authorization signed under it is recorded before the paid request leaves.
CREATE TABLE intent.payment_capabilities (
  capability_id  text          PRIMARY KEY CHECK (capability_id ~ '^cap_[0-9a-f]{24}$'),
  intent_id      text          NOT NULL REFERENCES intent.consumer_intents (intent_id),
  network        text          NOT NULL CHECK (network ~ '^eip155:[1-9][0-9]{0,14}$'),
  token          text          NOT NULL CHECK (token ~ '^0x[0-9a-f]{40}$'),
  token_name     text          NOT NULL CHECK (length(token_name) BETWEEN 1 AND 100),
  token_version  text          NOT NULL CHECK (length(token_version) BETWEEN 1 AND 20),
  payer          text          NOT NULL CHECK (payer ~ '^0x[0-9a-f]{40}$'),
  ceiling        numeric(78,0) NOT NULL CHECK (ceiling > 0),
  recipients     text[]        NOT NULL CHECK (cardinality(recipients) >= 1),
  minted_at      timestamptz   NOT NULL,
  expires_at     timestamptz   NOT NULL CHECK (expires_at > minted_at),
  redeemed_at    timestamptz,
  -- The one authorization signed under it: nonce (bytes32), validBefore (unix s), value, to.
  signed_authorization jsonb         CHECK (signed_authorization IS NULL OR jsonb_typeof(signed_authorization) = 'object'),
  signed_at      timestamptz,
  CHECK (signed_at IS NULL OR redeemed_at IS NOT NULL),
  CHECK ((signed_authorization IS NULL) = (signed_at IS NULL))
);
CREATE INDEX payment_capabilities_intent ON intent.payment_capabilities (intent_id, minted_at);
-- At most one signed authorization per intent, ever: a second payment cannot even be signed.
CREATE UNIQUE INDEX payment_capabilities_one_signed ON intent.payment_capabilities (intent_id)
  WHERE signed_at IS NOT NULL;

CREATE FUNCTION intent.guard_payment_capability() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NEW.capability_id IS DISTINCT FROM OLD.capability_id OR NEW.intent_id IS DISTINCT FROM OLD.intent_id
     OR NEW.network IS DISTINCT FROM OLD.network OR NEW.token IS DISTINCT FROM OLD.token
     OR NEW.token_name IS DISTINCT FROM OLD.token_name OR NEW.token_version IS DISTINCT FROM OLD.token_version
     OR NEW.payer IS DISTINCT FROM OLD.payer OR NEW.ceiling IS DISTINCT FROM OLD.ceiling
     OR NEW.recipients IS DISTINCT FROM OLD.recipients OR NEW.minted_at IS DISTINCT FROM OLD.minted_at
     OR NEW.expires_at IS DISTINCT FROM OLD.expires_at THEN
    RAISE EXCEPTION 'payment capability % never changes what it allows', OLD.capability_id
      USING ERRCODE = 'IN005';
  END IF;
  IF OLD.redeemed_at IS NOT NULL AND NEW.redeemed_at IS DISTINCT FROM OLD.redeemed_at THEN
    RAISE EXCEPTION 'payment capability % is redeemed once', OLD.capability_id USING ERRCODE = 'IN005';
  END IF;
  IF OLD.signed_at IS NOT NULL AND (NEW.signed_at IS DISTINCT FROM OLD.signed_at
       OR NEW.signed_authorization IS DISTINCT FROM OLD.signed_authorization) THEN
    RAISE EXCEPTION 'payment capability % signs once', OLD.capability_id USING ERRCODE = 'IN005';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER payment_capabilities_guard BEFORE UPDATE ON intent.payment_capabilities
  FOR EACH ROW EXECUTE FUNCTION intent.guard_payment_capability();
CREATE TRIGGER payment_capabilities_no_delete BEFORE DELETE ON intent.payment_capabilities
  FOR EACH ROW EXECUTE FUNCTION intent.guard_payment_capability();

GRANT SELECT, INSERT, UPDATE ON intent.consumer_intents, intent.payment_capabilities TO spend_control_service;
GRANT SELECT ON intent.consumer_intent_transitions TO spend_control_service;
GRANT SELECT, UPDATE (published_at) ON intent.consumer_intent_events TO spend_control_service;
