-- What the service role (spend_control_service, platform/db/roles.ts) may do in the intent schema.
-- Decisions, reservations, approved calls and receipts are written by the SECURITY DEFINER
-- preflight functions; directly the service only binds intents and moves a reservation out of
-- ACTIVE (reservations_guard checks how). The window totals are the budget's arithmetic: their
-- triggers now run as the owner, so the service needs, and has, no write on them at all. Tables
-- added later get the migrator's default privileges; these statements set them for existing ones.
ALTER FUNCTION intent.count_reservation() SECURITY DEFINER;
ALTER FUNCTION intent.count_approved_call() SECURITY DEFINER;
ALTER FUNCTION intent.forget_counts() SECURITY DEFINER;

GRANT USAGE ON SCHEMA intent TO spend_control_service;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA intent TO spend_control_service;

REVOKE ALL ON intent.spend_intents, intent.decisions, intent.reservations, intent.approved_calls,
              intent.decision_receipts, intent.policy_day_totals, intent.policy_call_minutes,
              intent.policy_settled_hours
  FROM spend_control_service;
GRANT SELECT ON intent.spend_intents, intent.decisions, intent.reservations, intent.approved_calls,
                intent.decision_receipts, intent.policy_day_totals, intent.policy_call_minutes,
                intent.policy_settled_hours
  TO spend_control_service;
GRANT INSERT ON intent.spend_intents TO spend_control_service;
GRANT UPDATE ON intent.reservations TO spend_control_service;

REVOKE ALL ON SEQUENCE intent.decisions_decision_id_seq FROM spend_control_service;
