-- Owner webhooks (DECISIONS "Outbound events", "Webhook endpoints"): the owner's endpoints, the
-- outbox of events about their policies, and one delivery job per event and matching endpoint.
--   * policy.owner_events is the outbox. A row is written in the transaction of the change it
--     tells of: by the triggers below (escalation created or resolved, policy changed), by the
--     anchoring commit (receipt.anchored) and by the relay of the intent subgraph's own outbox
--     (intent.consumer_intent_events), all through policy.record_owner_event. `source` names the
--     change, so a change is recorded once however often its writer retries.
--   * An event is recorded only when the owner has an ACTIVE endpoint that wants it; its
--     deliveries are queued in the same statement, so an event never waits for a fan-out step.
--   * Deliveries are jobs claimed with FOR UPDATE SKIP LOCKED, retried on a schedule, then FAILED
--     and shown to the owner, who may queue a FAILED one again (redeliver).
--   * Endpoint secrets are sealed (AES-256-GCM, platform/sealing.ts) like channel secrets.
-- It also finishes the channels: an email binding waits PENDING for its confirmation link (a
-- sealed single-use code mailed as notice kind EMAIL_CONFIRMATION, the only mail an unconfirmed
-- address gets), and every bound channel the policy lists is told when an escalation is
-- resolved (notice kind ESCALATION_RESOLVED).

CREATE TABLE policy.webhook_endpoints (
  endpoint_id       text          PRIMARY KEY CHECK (endpoint_id ~ '^whe_[0-9a-f]{24}$'),
  owner             text          NOT NULL CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  url               text          NOT NULL CHECK (char_length(url) BETWEEN 8 AND 2048),
  events            text[]        NOT NULL CHECK (
    cardinality(events) BETWEEN 1 AND 5
    AND events <@ ARRAY['escalation.created', 'escalation.resolved', 'consumer_intent.state_changed',
                        'receipt.anchored', 'policy.changed']),
  -- Empty: every policy of the owner.
  policy_ids        numeric(78,0)[] NOT NULL DEFAULT '{}' CHECK (cardinality(policy_ids) <= 100),
  sealed_secret     bytea         NOT NULL,
  state             text          NOT NULL CHECK (state IN ('ACTIVE', 'DISABLED')),
  created_at        timestamptz   NOT NULL,
  secret_rotated_at timestamptz,
  disabled_at       timestamptz,
  CHECK ((state = 'DISABLED') = (disabled_at IS NOT NULL))
);
CREATE INDEX webhook_endpoints_owner ON policy.webhook_endpoints (owner, created_at) WHERE state = 'ACTIVE';

CREATE TABLE policy.owner_events (
  event_id    text          PRIMARY KEY CHECK (event_id ~ '^evt_[0-9a-f]{24}$'),
  owner       text          NOT NULL CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  policy_id   numeric(78,0) NOT NULL,
  type        text          NOT NULL CHECK (type IN ('escalation.created', 'escalation.resolved',
                              'consumer_intent.state_changed', 'receipt.anchored', 'policy.changed')),
  data        jsonb         NOT NULL CHECK (jsonb_typeof(data) = 'object' AND octet_length(data::text) <= 8192),
  occurred_at timestamptz   NOT NULL,
  source      text          NOT NULL UNIQUE CHECK (char_length(source) <= 200)
);

CREATE TABLE policy.webhook_deliveries (
  delivery_id     text        PRIMARY KEY CHECK (delivery_id ~ '^whd_[0-9a-f]{24}$'),
  event_id        text        NOT NULL REFERENCES policy.owner_events (event_id),
  endpoint_id     text        NOT NULL REFERENCES policy.webhook_endpoints (endpoint_id),
  state           text        NOT NULL CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED')),
  -- Attempts since the delivery was queued (or queued again by redeliver).
  attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 100),
  next_attempt_at timestamptz NOT NULL,
  last_status     integer     CHECK (last_status BETWEEN 100 AND 599),
  last_error      text        CHECK (char_length(last_error) <= 500),
  last_attempt_at timestamptz,
  delivered_at    timestamptz,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  CHECK ((state = 'DELIVERED') = (delivered_at IS NOT NULL)),
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON policy.webhook_deliveries (next_attempt_at) WHERE state = 'PENDING';
CREATE INDEX webhook_deliveries_endpoint ON policy.webhook_deliveries (endpoint_id, created_at DESC, delivery_id DESC);

-- Published for every writer of an owner event (the triggers below, the intent subgraph's
-- anchoring commit and outbox relay), called inside the writer's transaction. Records the event
-- and queues one delivery per ACTIVE endpoint of the policy's owner that lists the type and the
-- policy (or no policy); records nothing when no endpoint wants it or the source was recorded
-- already. Returns the deliveries queued.
CREATE FUNCTION policy.record_owner_event(
  p_policy_id text, p_type text, p_data jsonb, p_occurred_at timestamptz, p_source text)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_owner text;
  v_event text;
  v_queued integer;
BEGIN
  SELECT p.owner INTO v_owner FROM policy.policies p
   WHERE p.policy_id = p_policy_id::numeric ORDER BY p.version DESC LIMIT 1;
  IF NOT FOUND OR NOT EXISTS (
      SELECT 1 FROM policy.webhook_endpoints e
       WHERE e.owner = v_owner AND e.state = 'ACTIVE' AND p_type = ANY (e.events)
         AND (cardinality(e.policy_ids) = 0 OR p_policy_id::numeric = ANY (e.policy_ids))) THEN
    RETURN 0;
  END IF;
  v_event := 'evt_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24);
  INSERT INTO policy.owner_events (event_id, owner, policy_id, type, data, occurred_at, source)
  VALUES (v_event, v_owner, p_policy_id::numeric, p_type, p_data, p_occurred_at, p_source)
  ON CONFLICT (source) DO NOTHING;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  INSERT INTO policy.webhook_deliveries (delivery_id, event_id, endpoint_id, state, next_attempt_at, created_at, updated_at)
  SELECT 'whd_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24), v_event, e.endpoint_id, 'PENDING',
         p_occurred_at, p_occurred_at, p_occurred_at
    FROM policy.webhook_endpoints e
   WHERE e.owner = v_owner AND e.state = 'ACTIVE' AND p_type = ANY (e.events)
     AND (cardinality(e.policy_ids) = 0 OR p_policy_id::numeric = ANY (e.policy_ids));
  GET DIAGNOSTICS v_queued = ROW_COUNT;
  RETURN v_queued;
END
$$;
REVOKE ALL ON FUNCTION policy.record_owner_event(text, text, jsonb, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION policy.record_owner_event(text, text, jsonb, timestamptz, text) TO spend_control_service;

-- escalation.created and escalation.resolved, in the transaction that opens or resolves it.
CREATE FUNCTION policy.escalation_owner_event() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_type text := CASE WHEN TG_OP = 'INSERT' THEN 'escalation.created' ELSE 'escalation.resolved' END;
BEGIN
  PERFORM policy.record_owner_event(
    NEW.policy_id::text, v_type,
    jsonb_build_object('pollRef', NEW.poll_ref, 'policyId', NEW.policy_id::text,
                       'policyVersion', NEW.policy_version, 'intentHash', NEW.intent_hash,
                       'decision', NEW.decision, 'decidingRule', NEW.deciding_rule,
                       'amount', NEW.amount::text, 'recipient', NEW.recipient, 'state', NEW.state,
                       'expiresAt', NEW.expires_at, 'resolvedAt', NEW.resolved_at,
                       'resolvedVia', NEW.resolved_via),
    coalesce(NEW.resolved_at, NEW.created_at), v_type || ':' || NEW.poll_ref);
  RETURN NULL;
END
$$;
CREATE TRIGGER escalations_owner_event_created AFTER INSERT ON policy.escalations
  FOR EACH ROW EXECUTE FUNCTION policy.escalation_owner_event();
CREATE TRIGGER escalations_owner_event_resolved AFTER UPDATE OF state ON policy.escalations
  FOR EACH ROW WHEN (OLD.state = 'PENDING' AND NEW.state <> 'PENDING')
  EXECUTE FUNCTION policy.escalation_owner_event();

-- policy.changed, from the append-only audit row every policy change writes in its transaction.
CREATE FUNCTION policy.policy_change_owner_event() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_status text;
  v_hash text;
BEGIN
  SELECT p.status, p.policy_hash INTO v_status, v_hash FROM policy.policies p
   WHERE p.policy_id = NEW.policy_id ORDER BY p.version DESC LIMIT 1;
  PERFORM policy.record_owner_event(
    NEW.policy_id::text, 'policy.changed',
    jsonb_build_object('policyId', NEW.policy_id::text, 'version', NEW.version, 'change', NEW.change,
                       'status', v_status, 'policyHash', v_hash),
    NEW.at, 'policy.changed:' || NEW.seq);
  RETURN NULL;
END
$$;
CREATE TRIGGER policy_changes_owner_event AFTER INSERT ON policy.policy_changes
  FOR EACH ROW EXECUTE FUNCTION policy.policy_change_owner_event();

-- ---------------------------------------------------------------------------------------------
-- Channels finished.
-- ---------------------------------------------------------------------------------------------
ALTER TABLE policy.channel_deliveries
  DROP CONSTRAINT channel_deliveries_notice_kind_check,
  ADD CONSTRAINT channel_deliveries_notice_kind_check CHECK (notice_kind IN
    ('ESCALATION', 'CONSUMER_INTENT_OUTCOME', 'ESCALATION_RESOLVED', 'EMAIL_CONFIRMATION')),
  DROP CONSTRAINT channel_deliveries_notice_shape,
  ADD CONSTRAINT channel_deliveries_notice_shape CHECK (
    (notice_kind = 'ESCALATION' AND poll_ref IS NOT NULL AND policy_id IS NULL AND intent_id IS NULL
       AND intent_version IS NULL AND outcome IS NULL AND payload IS NULL)
    OR (notice_kind = 'CONSUMER_INTENT_OUTCOME' AND poll_ref IS NULL AND sealed_payload IS NULL
       AND policy_id IS NOT NULL AND intent_id IS NOT NULL AND intent_version IS NOT NULL
       AND outcome IS NOT NULL AND payload IS NOT NULL)
    -- The escalation's row says what the notice says; nothing sealed.
    OR (notice_kind = 'ESCALATION_RESOLVED' AND poll_ref IS NOT NULL AND sealed_payload IS NULL
       AND policy_id IS NULL AND intent_id IS NULL AND intent_version IS NULL AND outcome IS NULL
       AND payload IS NULL)
    -- The confirmation code travels sealed, wiped once sent or given up on.
    OR (notice_kind = 'EMAIL_CONFIRMATION' AND poll_ref IS NULL AND policy_id IS NULL
       AND intent_id IS NULL AND intent_version IS NULL AND outcome IS NULL AND payload IS NULL)),
  DROP CONSTRAINT channel_deliveries_poll_ref_binding_id_key,
  ADD CONSTRAINT channel_deliveries_escalation_once UNIQUE (poll_ref, binding_id, notice_kind);

-- A resolved escalation cancels only its pending request notices, never the resolution notices
-- queued in the same transaction.
CREATE OR REPLACE FUNCTION policy.cancel_resolved_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE policy.channel_deliveries
     SET state = 'CANCELLED', sealed_payload = NULL, updated_at = coalesce(NEW.resolved_at, NEW.expires_at)
   WHERE poll_ref = NEW.poll_ref AND state = 'PENDING' AND notice_kind = 'ESCALATION';
  RETURN NULL;
END
$$;

-- Every ACTIVE binding of the owner whose kind the policy lists hears that the escalation was
-- approved, denied or expired, queued in the transaction that resolves it.
CREATE FUNCTION policy.queue_resolution_notices() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_rules jsonb;
BEGIN
  SELECT p.rules INTO v_rules FROM policy.policies p
   WHERE p.policy_id = NEW.policy_id AND p.version = NEW.policy_version;
  INSERT INTO policy.channel_deliveries (binding_id, poll_ref, notice_kind, state, next_attempt_at, created_at, updated_at)
  SELECT b.binding_id, NEW.poll_ref, 'ESCALATION_RESOLVED', 'PENDING', NEW.resolved_at, NEW.resolved_at, NEW.resolved_at
    FROM policy.channel_bindings b
   WHERE b.owner = NEW.owner AND b.state = 'ACTIVE'
     AND coalesce(v_rules -> 'escalation' -> 'channels', '["webhook"]'::jsonb) ? b.kind
  ON CONFLICT (poll_ref, binding_id, notice_kind) DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER escalations_resolution_notices AFTER UPDATE OF state ON policy.escalations
  FOR EACH ROW WHEN (OLD.state = 'PENDING' AND NEW.state <> 'PENDING')
  EXECUTE FUNCTION policy.queue_resolution_notices();

-- The confirmation mail is queued by the service in the transaction that starts the binding.
GRANT INSERT ON policy.channel_deliveries TO spend_control_service;
GRANT USAGE ON SEQUENCE policy.channel_deliveries_delivery_id_seq TO spend_control_service;
