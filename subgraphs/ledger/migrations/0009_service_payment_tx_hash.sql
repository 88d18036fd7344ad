-- The payments a settlement transaction made, by transaction: the gateway's offer-receipt
-- extension reads the settled payment of each paid answer by (tx_hash, payer)
-- (gateway/x402/extensions.ts). Without an index that read scanned the whole table, so each paid
-- call cost more the more payments there were: in a 10-minute soak it grew from 229 to 914 buffers
-- and from 1.2 to 9.0 ms a call, the most expensive statement of the service (docs/operations.md
-- "Soak"). A group settlement pays many payers in one transaction, hence payer in the key.
CREATE INDEX service_payments_tx_payer ON ledger.service_payments (tx_hash, payer)
  WHERE tx_hash IS NOT NULL;
