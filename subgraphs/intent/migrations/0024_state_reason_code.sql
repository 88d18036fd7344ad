-- The state reason's machine code in its own column (issue #30): state_reason keeps the text a
-- person reads (`CODE: detail`, as the API has always shown it), state_reason_code the code that
-- code compares (core/consumer/reasons.ts), so no reader parses the text or matches it with LIKE.
-- Existing rows get the code their text opens with, by the rule the readers used until now: an
-- upper snake case word of 3 to 64 characters not followed by a letter, digit or underscore.

ALTER TABLE intent.consumer_intents
  ADD COLUMN state_reason_code text
    CONSTRAINT consumer_intents_state_reason_code_check
    CHECK (state_reason_code ~ '^[A-Z][A-Z0-9_]{2,63}$'),
  -- The text opens with its code: the two columns never tell different stories.
  ADD CONSTRAINT consumer_intents_state_reason_code_text
    CHECK (state_reason_code IS NULL
           OR (state_reason IS NOT NULL AND starts_with(state_reason, state_reason_code)));

-- The backfill is no state change: the lifecycle trigger sees the same state and writes nothing.
UPDATE intent.consumer_intents
   SET state_reason_code = substring(state_reason FROM '^([A-Z][A-Z0-9_]{2,63})(?![A-Za-z0-9_])')
 WHERE state_reason IS NOT NULL;

-- The reconciler's scan (execution/reconciler.ts) reads ambiguous payments by code.
CREATE INDEX consumer_intents_reason_code_idx ON intent.consumer_intents (state_reason_code)
  WHERE state_reason_code IS NOT NULL;
