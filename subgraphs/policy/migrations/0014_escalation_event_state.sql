-- escalationUpdated events carry the state they announce. The NOTIFY of an escalation's insert or
-- state change now holds, beside whose it is, the fields an owner's subscription shows
-- (EscalationUpdate), taken from the row in the same transaction: the gateway routes it to the
-- owner's sockets without reading it again, and each state arrives in commit order. The timestamps
-- are written as JavaScript's toISOString does (UTC, milliseconds, Z), which is how the GraphQL
-- Date scalar serialises them on the read path. A NOTIFY holds under 8,000 bytes and a longer one
-- would fail the transaction that changes the escalation: the fields are bounded (about 600 bytes
-- in all) except `resolved_via`, so a payload past 7,000 bytes is sent without the state, as
-- before, and the gateway reads it instead. A gateway of an earlier version ignores the extra key.
CREATE OR REPLACE FUNCTION policy.notify_escalation_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  whose jsonb := jsonb_build_object(
    'pollRef', NEW.poll_ref, 'policyId', NEW.policy_id::text, 'owner', NEW.owner, 'state', NEW.state);
  payload text;
BEGIN
  payload := (whose || jsonb_build_object('update', jsonb_build_object(
    'pollRef', NEW.poll_ref,
    'state', NEW.state,
    'intentHash', NEW.intent_hash,
    'policyId', NEW.policy_id::text,
    'decision', NEW.decision,
    'amountAtomic', NEW.amount::text,
    'recipient', NEW.recipient,
    'createdAt', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'expiresAt', to_char(NEW.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'resolvedAt', to_char(NEW.resolved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'resolvedVia', NEW.resolved_via)))::text;
  IF octet_length(payload) > 7000 THEN
    payload := whose::text;
  END IF;
  PERFORM pg_notify('escalation_updated', payload);
  RETURN NULL;
END
$$;
