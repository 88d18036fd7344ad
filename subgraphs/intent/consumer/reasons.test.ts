// State reasons as two columns (migration 0024): a transition stores the code beside the text, the
// database refuses a code its text does not open with, and the backfill gives existing rows the
// code their text opens with, by the rule the readers used before (a regex, now retired).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newConsumerIntentId } from '../../../core/canon/ids';
import { codedReason, STATE_REASON, stateReason, textReason } from '../../../core/consumer/reasons';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { getConsumerIntent, insertConsumerIntent } from './store';
import { transitionConsumerIntent } from './transition';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const now = new Date('2026-11-24T10:00:00Z');

async function quotedIntent(): Promise<string> {
  const { row } = await insertConsumerIntent(db.pool, {
    intentId: newConsumerIntentId(),
    policyId: '12345',
    wallet: '0x' + 'ab'.repeat(20),
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: { domain: 'example.test' },
    idempotencyKey: null,
    now,
  });
  return row.intentId;
}

test('the constructors keep the text as the API showed it and the code beside it', () => {
  expect(stateReason(STATE_REASON.PAYMENT_AMBIGUOUS, 'signed, then lost')).toEqual({
    code: 'PAYMENT_AMBIGUOUS',
    text: 'PAYMENT_AMBIGUOUS: signed, then lost',
  });
  expect(stateReason('QUOTE_EXPIRED')).toEqual({ code: 'QUOTE_EXPIRED', text: 'QUOTE_EXPIRED' });
  expect(stateReason('QUOTE_EXPIRED', 'x'.repeat(2000)).text).toHaveLength(1000);
  expect(
    codedReason('MERCHANT_REFUSED_BEFORE_PAYMENT', 'MERCHANT_REFUSED_BEFORE_PAYMENT (503): no'),
  ).toEqual({
    code: 'MERCHANT_REFUSED_BEFORE_PAYMENT',
    text: 'MERCHANT_REFUSED_BEFORE_PAYMENT (503): no',
  });
  expect(() => codedReason('QUOTE_EXPIRED', 'expired')).toThrow('must open with its code');
  expect(() => stateReason('not a code')).toThrow('not a state reason code');
  expect(textReason('resolved PAID')).toEqual({ code: null, text: 'resolved PAID' });
});

test('a transition stores the code and the text; a plain string is text without a code', async () => {
  const coded = await quotedIntent();
  const expired = await transitionConsumerIntent(db.pool, coded, 'CREATED', 'EXPIRED', {
    now,
    reason: stateReason(STATE_REASON.QUOTE_EXPIRED, 'before the decision'),
  });
  expect(expired).toMatchObject({
    stateReason: 'QUOTE_EXPIRED: before the decision',
    stateReasonCode: 'QUOTE_EXPIRED',
  });
  const free = await quotedIntent();
  await transitionConsumerIntent(db.pool, free, 'CREATED', 'CANCELLED', {
    now,
    reason: 'the buyer left',
  });
  expect(await getConsumerIntent(db.pool, free)).toMatchObject({
    stateReason: 'the buyer left',
    stateReasonCode: null,
  });
});

test('the database refuses a code the text does not open with, or a code without text', async () => {
  const intentId = await quotedIntent();
  await expect(
    db.pool.query(
      `UPDATE intent.consumer_intents SET state_reason = 'QUOTE_EXPIRED: late',
              state_reason_code = 'PAYMENT_AMBIGUOUS' WHERE intent_id = $1`,
      [intentId],
    ),
  ).rejects.toThrow(/consumer_intents_state_reason_code_text/);
  await expect(
    db.pool.query(
      `UPDATE intent.consumer_intents SET state_reason_code = 'QUOTE_EXPIRED' WHERE intent_id = $1`,
      [intentId],
    ),
  ).rejects.toThrow(/consumer_intents_state_reason_code_text/);
});

test("the migration's backfill reads the code the way the readers' regex did", async () => {
  const migration = readFileSync(
    join(__dirname, '../migrations/0024_state_reason_code.sql'),
    'utf8',
  );
  const backfill = /UPDATE intent\.consumer_intents[\s\S]*?;/.exec(migration)![0];
  const texts = [
    'PAYMENT_AMBIGUOUS: signed, then the client failed: Error 0xdeadbeef',
    'MERCHANT_REFUSED_BEFORE_PAYMENT (503): refused',
    'ESCALATION_DENIED',
    'DELIVERY_CONTRADICTED: the registry contradicts the merchant',
    'resolved PAID from chain transaction 0xab: the delivery is checked next',
    'quote expired',
    'ABCdef: not a code',
    'AB: too short',
  ];
  const legacyRule = (text: string) =>
    /^([A-Z][A-Z0-9_]{2,63})(?![A-Za-z0-9_])/.exec(text)?.[1] ?? null;
  const ids: string[] = [];
  for (const text of texts) {
    const intentId = await quotedIntent();
    await db.pool.query(
      'UPDATE intent.consumer_intents SET state_reason = $2, state_reason_code = NULL WHERE intent_id = $1',
      [intentId, text],
    );
    ids.push(intentId);
  }
  await db.pool.query(backfill);
  for (const [i, text] of texts.entries())
    expect((await getConsumerIntent(db.pool, ids[i]))!.stateReasonCode).toBe(legacyRule(text));
});
