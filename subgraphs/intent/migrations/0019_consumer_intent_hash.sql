-- A consumer intent by its intentHash (POST /generate_dispute_packet {intentHash}, docs/disputes.md):
-- without it that lookup scans every intent.
CREATE INDEX consumer_intents_intent_hash ON intent.consumer_intents (intent_hash)
  WHERE intent_hash IS NOT NULL;
