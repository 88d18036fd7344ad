-- Delivery verification (issue #18): the service's own finding on what the merchant delivered,
-- kept in a column of its own beside the merchant's word (provider_attested), never merged with
-- it. service_verified is the receipt's `serviceVerified` {verified, method, source, checkedAt,
-- detail}; the attempt count and the next attempt's time drive the delivery job's bounded retries
-- with backoff while the registry gives no usable answer.
ALTER TABLE intent.consumer_intents
  ADD COLUMN service_verified jsonb
    CHECK (service_verified IS NULL OR (jsonb_typeof(service_verified) = 'object'
           AND jsonb_typeof(service_verified -> 'verified') = 'boolean'
           AND service_verified ->> 'method' IN ('RDAP', 'PROVIDER_ATTESTATION'))),
  ADD COLUMN delivery_attempts integer NOT NULL DEFAULT 0
    CHECK (delivery_attempts >= 0 AND delivery_attempts <= 100),
  ADD COLUMN delivery_next_attempt_at timestamptz;

-- The jobs' partial index now covers the delivery states too.
DROP INDEX intent.consumer_intents_open;
CREATE INDEX consumer_intents_open ON intent.consumer_intents (state, updated_at)
  WHERE state IN ('AWAITING_APPROVAL','APPROVED','AWAITING_FUNDING','FUNDED','EXECUTION_QUEUED',
                  'PROVIDER_PAYMENT_PENDING','PROVIDER_PAID','PROVIDER_ACKNOWLEDGED',
                  'DELIVERY_PENDING','DELIVERY_VERIFIED',
                  'FAILED_BEFORE_PAYMENT','REFUND_PENDING','MANUAL_REVIEW');
