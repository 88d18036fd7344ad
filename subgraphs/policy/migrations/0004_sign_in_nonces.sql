-- Sign-in (SIWE) nonces: server-issued, expiring, single use. Use is one conditional UPDATE
-- (consumed_at IS NULL AND not expired), committed before the signature is checked, so a failed
-- verification burns the nonce and two concurrent replays cannot both succeed. Expired rows are
-- pruned as new nonces are issued; a pruned nonce is as unusable as a consumed one.
CREATE TABLE policy.sign_in_nonces (
  nonce       text        PRIMARY KEY CHECK (nonce ~ '^[0-9a-f]{32}$'),
  issued_at   timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL CHECK (expires_at > issued_at),
  consumed_at timestamptz
);
CREATE INDEX sign_in_nonces_expiry ON policy.sign_in_nonces (expires_at);
