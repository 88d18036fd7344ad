-- What the service role (spend_control_service, platform/db/roles.ts) may do in the policy schema.
-- The audit tables (policy_changes, escalation_events) are append-only: INSERT, never UPDATE or
-- DELETE; an escalation is never deleted; escalations and their deliveries are created by the
-- SECURITY DEFINER functions the intent subgraph's preflight calls, never directly. Tables added
-- later get the migrator's default privileges; these statements set them for the existing ones.
GRANT USAGE ON SCHEMA policy TO spend_control_service;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA policy TO spend_control_service;
REVOKE EXECUTE ON FUNCTION policy.open_escalation(text, text, text, integer, text, text, text, numeric, text, jsonb, bytea, bytea, timestamptz),
                           policy.escalation_approval(text),
                           policy.use_escalation_approval(text, timestamptz)
  FROM spend_control_service;

REVOKE ALL ON policy.policies, policy.owner_nonces, policy.policy_changes, policy.sign_in_nonces,
              policy.registrations, policy.escalations, policy.escalation_events,
              policy.channel_bindings, policy.channel_deliveries
  FROM spend_control_service;
GRANT SELECT ON policy.policies, policy.owner_nonces, policy.policy_changes, policy.sign_in_nonces,
                policy.registrations, policy.escalations, policy.escalation_events,
                policy.channel_bindings, policy.channel_deliveries
  TO spend_control_service;
GRANT INSERT, UPDATE ON policy.policies, policy.owner_nonces, policy.channel_bindings TO spend_control_service;
GRANT INSERT ON policy.policy_changes, policy.registrations, policy.escalation_events TO spend_control_service;
GRANT INSERT, UPDATE, DELETE ON policy.sign_in_nonces TO spend_control_service;
GRANT UPDATE ON policy.escalations, policy.channel_deliveries TO spend_control_service;

REVOKE ALL ON SEQUENCE policy.policy_changes_seq_seq, policy.escalation_events_seq_seq,
                       policy.channel_deliveries_delivery_id_seq
  FROM spend_control_service;
GRANT USAGE ON SEQUENCE policy.policy_changes_seq_seq, policy.escalation_events_seq_seq TO spend_control_service;
