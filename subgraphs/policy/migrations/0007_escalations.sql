-- Escalations: the owner's decision on an ESCALATED_* preflight. One row per escalation, bound to
-- the intentHash, amount, recipient, policy id and version; the single-use reply code is stored
-- only as its sha256. States PENDING → APPROVED | DENIED | EXPIRED, enforced by CHECKs and a
-- transition trigger; an approval is used up by exactly one preflight. Every state change is
-- published with pg_notify('escalation_updated', …) and so reaches subscribers only on commit.
-- The intent subgraph opens escalations and reads approvals inside its own preflight transaction
-- through the SECURITY DEFINER functions at the end; nothing else crosses the schema boundary.
CREATE TABLE policy.escalations (
  poll_ref         text          PRIMARY KEY CHECK (poll_ref ~ '^esc_[0-9a-f]{24}$'),
  intent_hash      text          NOT NULL CHECK (intent_hash ~ '^0x[0-9a-f]{64}$'),
  policy_id        numeric(78,0) NOT NULL,
  policy_version   integer       NOT NULL CHECK (policy_version >= 1),
  owner            text          NOT NULL CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  decision         text          NOT NULL CHECK (decision ~ '^ESCALATED_[A-Z_]+$'),
  deciding_rule    text          NOT NULL,
  rule_reason      text          NOT NULL,
  amount           numeric(78,0) NOT NULL CHECK (amount > 0),
  recipient        text          NOT NULL CHECK (recipient ~ '^0x[0-9a-f]{40}$'),
  -- The canonical wire intent (DECISIONS "SpendIntent (wire)"): what notices show and what an
  -- EIP-712 dashboard signature is checked against.
  intent           jsonb         NOT NULL CHECK (jsonb_typeof(intent) = 'object'),
  code_sha256      bytea         NOT NULL UNIQUE CHECK (octet_length(code_sha256) = 32),
  code_used_at     timestamptz,
  state            text          NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'APPROVED', 'DENIED', 'EXPIRED')),
  created_at       timestamptz   NOT NULL,
  expires_at       timestamptz   NOT NULL,
  resolved_at      timestamptz,
  -- The resolving channel (telegram, slack, webhook, dashboard) and sender: shown to the owner,
  -- withheld from the public poll route.
  resolved_via     text,
  resolved_by      text,
  owner_signature  text,
  approval_used_at timestamptz,
  CHECK (expires_at > created_at AND expires_at <= created_at + interval '1440 minutes'),
  CHECK ((state = 'PENDING') = (resolved_at IS NULL)),
  CHECK (state IN ('PENDING', 'EXPIRED') OR (resolved_via IS NOT NULL AND resolved_at < expires_at)),
  CHECK (state <> 'EXPIRED' OR (resolved_via IS NULL AND resolved_at = expires_at)),
  CHECK (approval_used_at IS NULL OR state = 'APPROVED'),
  CHECK (owner_signature IS NULL OR state = 'APPROVED')
);
-- Idempotent per intentHash while open: at most one PENDING escalation per intent.
CREATE UNIQUE INDEX escalations_open_intent ON policy.escalations (intent_hash) WHERE state = 'PENDING';
CREATE INDEX escalations_due ON policy.escalations (expires_at) WHERE state = 'PENDING';
CREATE INDEX escalations_owner ON policy.escalations (owner, created_at DESC, poll_ref DESC);
CREATE INDEX escalations_policy ON policy.escalations (policy_id, created_at DESC, poll_ref DESC);
CREATE INDEX escalations_approved_intent ON policy.escalations (intent_hash) WHERE state = 'APPROVED' AND approval_used_at IS NULL;

-- What happened to an escalation, for its owner: refused replies (wrong or reused code, unbound
-- sender, after expiry), deliveries and their failures, the resolution. Append-only. poll_ref is
-- NULL for a reply whose code matches no escalation (then only owner, when known, names it).
CREATE TABLE policy.escalation_events (
  seq      bigserial   PRIMARY KEY,
  poll_ref text        REFERENCES policy.escalations (poll_ref),
  owner    text        CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  kind     text        NOT NULL CHECK (kind IN (
             'CREATED', 'APPROVED', 'DENIED', 'EXPIRED', 'APPROVAL_USED',
             'REPLY_UNKNOWN_CODE', 'REPLY_CODE_REUSED', 'REPLY_UNBOUND_SENDER', 'REPLY_AFTER_EXPIRY', 'REPLY_ALREADY_RESOLVED',
             'DELIVERY_SENT', 'DELIVERY_FAILED', 'DELIVERY_GAVE_UP')),
  channel  text,
  sender   text,
  detail   text        CHECK (char_length(detail) <= 500),
  at       timestamptz NOT NULL
);
CREATE INDEX escalation_events_ref ON policy.escalation_events (poll_ref, seq);
CREATE INDEX escalation_events_owner ON policy.escalation_events (owner, seq);
CREATE TRIGGER escalation_events_append_only BEFORE UPDATE OR DELETE ON policy.escalation_events
  FOR EACH ROW EXECUTE FUNCTION policy.refuse_change_rewrite();

-- The one legal life of an escalation: its binding never changes, a resolved state is final, an
-- owner decision only before expiry, the code used at most once, an approval used at most once.
CREATE FUNCTION policy.check_escalation_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'escalations are never deleted';
  END IF;
  IF (NEW.poll_ref, NEW.intent_hash, NEW.policy_id, NEW.policy_version, NEW.owner, NEW.decision, NEW.amount,
      NEW.recipient, NEW.intent, NEW.code_sha256, NEW.created_at, NEW.expires_at)
     IS DISTINCT FROM
     (OLD.poll_ref, OLD.intent_hash, OLD.policy_id, OLD.policy_version, OLD.owner, OLD.decision, OLD.amount,
      OLD.recipient, OLD.intent, OLD.code_sha256, OLD.created_at, OLD.expires_at) THEN
    RAISE EXCEPTION 'escalation % is bound: its intent, amount, recipient, policy, code and expiry never change', OLD.poll_ref;
  END IF;
  IF OLD.state <> 'PENDING' AND NEW.state IS DISTINCT FROM OLD.state THEN
    RAISE EXCEPTION 'escalation % is % and final', OLD.poll_ref, OLD.state;
  END IF;
  IF OLD.state = 'PENDING' AND NEW.state <> 'PENDING' AND NEW.state <> 'EXPIRED' AND NEW.resolved_at >= OLD.expires_at THEN
    RAISE EXCEPTION 'escalation % expired at %; it can no longer be decided', OLD.poll_ref, OLD.expires_at;
  END IF;
  IF OLD.code_used_at IS NOT NULL AND NEW.code_used_at IS DISTINCT FROM OLD.code_used_at THEN
    RAISE EXCEPTION 'the code of escalation % is already used', OLD.poll_ref;
  END IF;
  IF OLD.approval_used_at IS NOT NULL AND NEW.approval_used_at IS DISTINCT FROM OLD.approval_used_at THEN
    RAISE EXCEPTION 'the approval of escalation % is already used', OLD.poll_ref;
  END IF;
  IF OLD.state <> 'PENDING' AND (NEW.resolved_at, NEW.resolved_via, NEW.resolved_by, NEW.owner_signature)
     IS DISTINCT FROM (OLD.resolved_at, OLD.resolved_via, OLD.resolved_by, OLD.owner_signature) THEN
    RAISE EXCEPTION 'the resolution of escalation % is final', OLD.poll_ref;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER escalations_transition BEFORE UPDATE OR DELETE ON policy.escalations
  FOR EACH ROW EXECUTE FUNCTION policy.check_escalation_transition();

-- Published on commit to the gateway's LISTEN bridge: which escalation, whose, and its state.
CREATE FUNCTION policy.notify_escalation_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('escalation_updated', json_build_object(
    'pollRef', NEW.poll_ref, 'policyId', NEW.policy_id::text, 'owner', NEW.owner, 'state', NEW.state)::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER escalations_notify_insert AFTER INSERT ON policy.escalations
  FOR EACH ROW EXECUTE FUNCTION policy.notify_escalation_updated();
CREATE TRIGGER escalations_notify_state AFTER UPDATE OF state ON policy.escalations
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION policy.notify_escalation_updated();

-- Fail closed, lazily: every PENDING escalation of this intent whose time is up becomes EXPIRED
-- (resolved at its expiry instant, so the answer does not depend on who noticed first).
CREATE FUNCTION policy.expire_due_escalations(p_intent_hash text, p_poll_ref text, p_now timestamptz) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  expired integer;
BEGIN
  WITH due AS (
    UPDATE policy.escalations e
       SET state = 'EXPIRED', resolved_at = e.expires_at
     WHERE e.state = 'PENDING' AND e.expires_at <= p_now
       AND (p_intent_hash IS NULL OR e.intent_hash = p_intent_hash)
       AND (p_poll_ref IS NULL OR e.poll_ref = p_poll_ref)
    RETURNING e.poll_ref, e.owner, e.expires_at
  ), logged AS (
    INSERT INTO policy.escalation_events (poll_ref, owner, kind, detail, at)
    SELECT due.poll_ref, due.owner, 'EXPIRED', 'no decision before the timeout: default deny', due.expires_at FROM due
    RETURNING 1
  )
  SELECT count(*) INTO expired FROM logged;
  RETURN expired;
END
$$;
