-- x402 `payment-identifier` extension (docs/x402.md#payment-identifiers): a client-chosen id that
-- names one payment, scoped by its payer. The first payload presented under an id binds it: the same
-- payload again is answered from its payment record (ledger.service_payments, found by the
-- authorization it names) and never settles twice; another payload under that id is 409.
-- The row is written before the payment is claimed, so two different payloads racing under one id
-- cannot both be settled: the second insert finds the first row.
CREATE TABLE gateway.payment_identifiers (
  payer          text        NOT NULL,
  identifier     text        NOT NULL,
  -- sha256 hex of the canonical JSON of the payload's `accepted` and `payload` (the signed part).
  payload_digest text        NOT NULL,
  -- The authorization the payload carries: its record in ledger.service_payments.
  network        text        NOT NULL,
  asset          text        NOT NULL,
  nonce          text        NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (payer, identifier),
  CONSTRAINT payment_identifiers_payer_shape CHECK (payer ~ '^0x[0-9a-f]{40}$'),
  CONSTRAINT payment_identifiers_identifier_shape CHECK (identifier ~ '^[a-zA-Z0-9_-]{16,128}$'),
  CONSTRAINT payment_identifiers_digest_shape CHECK (payload_digest ~ '^[0-9a-f]{64}$'),
  CONSTRAINT payment_identifiers_network_shape CHECK (network ~ '^eip155:[0-9]{1,20}$'),
  CONSTRAINT payment_identifiers_asset_shape CHECK (asset ~ '^0x[0-9a-f]{40}$'),
  CONSTRAINT payment_identifiers_nonce_shape CHECK (nonce ~ '^0x[0-9a-f]{64}$')
);

GRANT USAGE ON SCHEMA gateway TO spend_control_service;
GRANT SELECT, INSERT ON gateway.payment_identifiers TO spend_control_service;
