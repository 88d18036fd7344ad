-- What the service role (spend_control_service, platform/db/roles.ts) may do in the ledger. Money
-- moves only through the SECURITY DEFINER posting functions, so the ledger's own tables are
-- read-only to it: no INSERT, and no UPDATE or DELETE on anything append-only. It writes the
-- operator audit (append-only: INSERT) and x402 payments, whose state machine the triggers guard.
-- The internal write helpers are for the posting functions only. Tables added later get the
-- migrator's default privileges; these statements set them for the tables that predate the roles.
GRANT USAGE ON SCHEMA ledger TO spend_control_service;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ledger TO spend_control_service;
REVOKE EXECUTE ON FUNCTION ledger.write_group(text, text, text[], numeric[], text, text, text, text, text),
                           ledger.replay_group(text, text, text[], numeric[], text, text, text, text, text)
  FROM spend_control_service;

REVOKE ALL ON ledger.assets, ledger.accounts, ledger.groups, ledger.entries, ledger.operator_actions,
              ledger.treasury_snapshots, ledger.service_payments, ledger.account_balances,
              ledger.trial_balance, ledger.kind_balances, ledger.treasury_drift
  FROM spend_control_service;
GRANT SELECT ON ledger.assets, ledger.accounts, ledger.groups, ledger.entries, ledger.operator_actions,
                ledger.treasury_snapshots, ledger.service_payments, ledger.account_balances,
                ledger.trial_balance, ledger.kind_balances, ledger.treasury_drift
  TO spend_control_service;
GRANT INSERT ON ledger.operator_actions TO spend_control_service;
-- DELETE: a claim refused before it reached the chain disappears (service_payments_delete allows
-- nothing else); UPDATE: the forward-only transitions of service_payments_transition.
GRANT INSERT, UPDATE, DELETE ON ledger.service_payments TO spend_control_service;
