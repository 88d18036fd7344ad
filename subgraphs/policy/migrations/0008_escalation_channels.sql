-- Where escalation notices go and who may answer them. A channel binding belongs to one owner and
-- becomes ACTIVE only through a link code (stored as sha256, single use, expiring). Deliveries are
-- jobs (one per escalation and bound channel) claimed by workers with
-- FOR UPDATE SKIP LOCKED and retried a bounded number of times. A delivery carries the reply code
-- sealed (AES-256-GCM, key derived from INTERNAL_ACTOR_SECRET) only until it is sent or the
-- escalation is resolved: then the sealed copy is wiped, and only the code's sha256 remains.
CREATE TABLE policy.channel_bindings (
  binding_id       text        PRIMARY KEY CHECK (binding_id ~ '^chb_[0-9a-f]{24}$'),
  owner            text        NOT NULL CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  kind             text        NOT NULL CHECK (kind IN ('telegram', 'slack', 'webhook', 'email')),
  -- telegram: the chat id; slack: the channel id; webhook: the URL; email: the address.
  -- NULL only while a telegram link waits for the owner's /start message.
  address          text        CHECK (char_length(address) <= 2048),
  -- Who may reply: the telegram or slack user id (NULL: anyone in the bound chat or channel).
  reply_from       text        CHECK (char_length(reply_from) <= 128),
  -- webhook only: the HMAC key of notices and replies, sealed like reply codes.
  sealed_secret    bytea,
  state            text        NOT NULL CHECK (state IN ('PENDING', 'ACTIVE', 'REVOKED')),
  link_code_sha256 bytea       UNIQUE CHECK (octet_length(link_code_sha256) = 32),
  link_expires_at  timestamptz NOT NULL,
  created_at       timestamptz NOT NULL,
  activated_at     timestamptz,
  revoked_at       timestamptz,
  CHECK (state = 'PENDING' OR link_code_sha256 IS NULL),
  CHECK (state <> 'ACTIVE' OR (address IS NOT NULL AND activated_at IS NOT NULL)),
  CHECK ((kind = 'webhook') = (sealed_secret IS NOT NULL)),
  CHECK (link_expires_at > created_at)
);
CREATE INDEX channel_bindings_owner ON policy.channel_bindings (owner, created_at);
CREATE INDEX channel_bindings_address ON policy.channel_bindings (kind, address) WHERE state = 'ACTIVE';

CREATE TABLE policy.channel_deliveries (
  delivery_id     bigserial   PRIMARY KEY,
  binding_id      text        NOT NULL REFERENCES policy.channel_bindings (binding_id),
  poll_ref        text        NOT NULL REFERENCES policy.escalations (poll_ref),
  state           text        NOT NULL CHECK (state IN ('PENDING', 'SENT', 'FAILED', 'CANCELLED')),
  sealed_payload  bytea,
  attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0 AND attempts <= 10),
  next_attempt_at timestamptz NOT NULL,
  external_id     text        CHECK (char_length(external_id) <= 256),
  last_error      text        CHECK (char_length(last_error) <= 500),
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  -- The sealed code exists only while the job can still run.
  CHECK (state = 'PENDING' OR sealed_payload IS NULL),
  UNIQUE (poll_ref, binding_id)
);
CREATE INDEX channel_deliveries_due ON policy.channel_deliveries (next_attempt_at) WHERE state = 'PENDING';

-- A resolved or expired escalation needs no notice any more: cancel what is queued and wipe the
-- sealed codes in the same transaction as the state change.
CREATE FUNCTION policy.cancel_resolved_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE policy.channel_deliveries
     SET state = 'CANCELLED', sealed_payload = NULL, updated_at = coalesce(NEW.resolved_at, NEW.expires_at)
   WHERE poll_ref = NEW.poll_ref AND state = 'PENDING';
  RETURN NULL;
END
$$;
CREATE TRIGGER escalations_cancel_deliveries AFTER UPDATE OF state ON policy.escalations
  FOR EACH ROW WHEN (OLD.state = 'PENDING' AND NEW.state <> 'PENDING') EXECUTE FUNCTION policy.cancel_resolved_deliveries();

-- ---------------------------------------------------------------------------------------------
-- Published for the intent subgraph (its preflight transaction calls them). SECURITY DEFINER so
-- the caller needs EXECUTE only, never a grant on these tables.
-- ---------------------------------------------------------------------------------------------

-- Opens the escalation of an ESCALATED_* decision, or answers the one already open for this
-- intentHash (opened = false). The timeout is the policy's escalation.timeoutMinutes; a delivery
-- job is queued for every ACTIVE binding of the owner whose kind the policy lists.
CREATE FUNCTION policy.open_escalation(
  p_poll_ref text, p_intent_hash text, p_policy_id text, p_policy_version integer, p_decision text,
  p_deciding_rule text, p_rule_reason text, p_amount numeric, p_recipient text, p_intent jsonb,
  p_code_sha256 bytea, p_sealed_code bytea, p_now timestamptz)
RETURNS TABLE (poll_ref text, expires_at timestamptz, opened boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_open policy.escalations;
  v_policy policy.policies;
  v_timeout integer;
  v_expires timestamptz;
BEGIN
  PERFORM policy.expire_due_escalations(p_intent_hash, NULL, p_now);
  SELECT * INTO v_open FROM policy.escalations e WHERE e.intent_hash = p_intent_hash AND e.state = 'PENDING';
  IF FOUND THEN
    RETURN QUERY SELECT v_open.poll_ref, v_open.expires_at, false;
    RETURN;
  END IF;
  SELECT * INTO v_policy FROM policy.policies p
   WHERE p.policy_id = p_policy_id::numeric ORDER BY p.version DESC LIMIT 1;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no policy %', p_policy_id;
  END IF;
  v_timeout := coalesce((v_policy.rules -> 'escalation' ->> 'timeoutMinutes')::integer, 30);
  IF v_timeout < 1 OR v_timeout > 1440 THEN
    RAISE EXCEPTION 'escalation.timeoutMinutes % is outside 1..1440', v_timeout;
  END IF;
  v_expires := p_now + make_interval(mins => v_timeout);
  INSERT INTO policy.escalations (poll_ref, intent_hash, policy_id, policy_version, owner, decision, deciding_rule,
                                  rule_reason, amount, recipient, intent, code_sha256, state, created_at, expires_at)
  VALUES (p_poll_ref, p_intent_hash, p_policy_id::numeric, p_policy_version, v_policy.owner, p_decision, p_deciding_rule,
          p_rule_reason, p_amount, lower(p_recipient), p_intent, p_code_sha256, 'PENDING', p_now, v_expires);
  INSERT INTO policy.escalation_events (poll_ref, owner, kind, detail, at)
  VALUES (p_poll_ref, v_policy.owner, 'CREATED', p_decision, p_now);
  INSERT INTO policy.channel_deliveries (binding_id, poll_ref, state, sealed_payload, next_attempt_at, created_at, updated_at)
  SELECT b.binding_id, p_poll_ref, 'PENDING', p_sealed_code, p_now, p_now, p_now
    FROM policy.channel_bindings b
   WHERE b.owner = v_policy.owner AND b.state = 'ACTIVE'
     AND coalesce(v_policy.rules -> 'escalation' -> 'channels', '["webhook"]'::jsonb) ? b.kind;
  RETURN QUERY SELECT p_poll_ref, v_expires, true;
END
$$;

-- The owner's approval of exactly this intentHash that no preflight has used yet, or NULL.
CREATE FUNCTION policy.escalation_approval(p_intent_hash text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT e.poll_ref FROM policy.escalations e
   WHERE e.intent_hash = p_intent_hash AND e.state = 'APPROVED' AND e.approval_used_at IS NULL
   ORDER BY e.resolved_at, e.poll_ref
   LIMIT 1
$$;

-- Uses the approval up (one conditional UPDATE: true for exactly one caller).
CREATE FUNCTION policy.use_escalation_approval(p_poll_ref text, p_now timestamptz) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_owner text;
BEGIN
  UPDATE policy.escalations e SET approval_used_at = p_now
   WHERE e.poll_ref = p_poll_ref AND e.state = 'APPROVED' AND e.approval_used_at IS NULL
  RETURNING e.owner INTO v_owner;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  INSERT INTO policy.escalation_events (poll_ref, owner, kind, detail, at)
  VALUES (p_poll_ref, v_owner, 'APPROVAL_USED', 'a preflight of the approved intent was approved', p_now);
  RETURN true;
END
$$;

REVOKE ALL ON FUNCTION policy.expire_due_escalations(text, text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION policy.open_escalation(text, text, text, integer, text, text, text, numeric, text, jsonb, bytea, bytea, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION policy.escalation_approval(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION policy.use_escalation_approval(text, timestamptz) FROM PUBLIC;
