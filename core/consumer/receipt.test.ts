// The public receipt against DECISIONS "Receipts": the allow-list is written out here again, by
// hand, and compared key for key at every level; a private record stuffed with session ids,
// correlation ids, the approving channel and extra keys at every level leaks none of them; the
// digest is recomputed from the body with JCS and keccak256 implementations other than the
// service's (the `canonicalize` package directly and a JCS written below, with viem's keccak256
// where the service uses js-sha3).
import canonicalize from 'canonicalize';
import { keccak256, toBytes } from 'viem';
import {
  buildConsumerReceipt,
  type ConsumerReceipt,
  consumerReceiptDigest,
  consumerReceiptId,
  type ReceiptSource,
} from './receipt';

/** DECISIONS "Receipts", transcribed: object → its keys; a nested allow-listed object by name. */
const ALLOW_LIST = {
  top: [
    'intentId',
    'capability',
    'state',
    'createdAt',
    'updatedAt',
    'policy',
    'providerAttested',
    'serviceVerified',
    'paymentLegs',
    'fee',
    'spread',
    'anchor',
    'integrity',
  ],
  policy: ['policyId', 'policyHash', 'policyVersion', 'decision'],
  providerAttested: ['status', 'attestedAt', 'fields'],
  serviceVerified: ['verified', 'method', 'source', 'checkedAt', 'detail'],
  paymentLegs: ['funding', 'settlement'],
  leg: ['chain', 'asset', 'amount', 'sender', 'recipient', 'txHash'],
  anchor: ['state', 'receiptId'],
  integrity: ['digest'],
};

const SECRET = {
  session: 'sess_SECRET_session_0001',
  correlation: 'cor_5ec2e75ec2e75ec2',
  channel: 'telegram:SECRET_CHANNEL_42',
  account: 'acct_SECRET_account_7',
  payload: 'SECRET_PAYLOAD_note',
  nonce: '0x' + '5e'.repeat(32),
};

const INTENT_ID = 'ci_' + '0123456789abcdef01234567';
const PAYER = '0x' + 'AA'.repeat(20);
const FUNDING_TREASURY = '0x' + 'bb'.repeat(20);
const SETTLEMENT_TREASURY = '0x' + 'cc'.repeat(20);
const MERCHANT = '0x' + 'dd'.repeat(20);
const USDT0 = '0x' + '01'.repeat(20);
const USDC = '0x' + '02'.repeat(20);
const FUNDING_TX = '0x' + 'F1'.repeat(32);
const SETTLEMENT_TX = '0x' + 'f2'.repeat(32);

/** A private record as the database holds it after delivery, with secrets and extras everywhere. */
function fullRecord(): ReceiptSource & Record<string, unknown> {
  return {
    intentId: INTENT_ID,
    policyId: '7602',
    capability: 'domains.check',
    state: 'DELIVERY_VERIFIED',
    createdAt: new Date('2026-11-24T10:00:00Z'),
    updatedAt: new Date('2026-11-24T10:00:03.250Z'),
    // Not allow-listed at all.
    wallet: PAYER,
    params: { domain: 'x.test', note: SECRET.payload },
    sessionId: SECRET.session,
    correlationId: SECRET.correlation,
    accountId: SECRET.account,
    idempotencyKey: 'SECRET_idem',
    quote: {
      quoteId: 'cq_' + '0'.repeat(18),
      providerCost: { network: 'eip155:8453', asset: USDC, amount: '50000' },
      feeBps: 0,
      fee: '0',
      spreadBps: 50,
      spread: '250',
      funding: { network: 'eip155:196', asset: USDT0, amount: '50250', payTo: FUNDING_TREASURY },
      merchant: {
        url: `http://127.0.0.1:1/domains/check?domain=x.test&k=${SECRET.payload}`,
        payTo: MERCHANT,
      },
      sessionId: SECRET.session,
    },
    decision: {
      decision: 'APPROVED',
      intentHash: '0x' + '11'.repeat(32),
      policyId: '7602',
      policyHash: '0x' + 'AB'.repeat(32),
      policyVersion: 3,
      ruleTrace: [{ rule: 'amount', detail: SECRET.payload }],
      escalation: { pollRef: 'esc_' + '0'.repeat(24), resolvedBy: SECRET.channel },
      correlationId: SECRET.correlation,
      receiptId: '0x' + '99'.repeat(32),
    },
    funding: {
      paymentId: 'sp_SECRET',
      payer: PAYER,
      payTo: FUNDING_TREASURY,
      network: 'eip155:196',
      asset: USDT0,
      amount: '50250',
      txHash: FUNDING_TX,
      groupId: 'lg_' + '0'.repeat(24),
      fundedAt: '2026-11-24T10:00:01Z',
      sessionId: SECRET.session,
    },
    settlement: {
      capabilityId: 'cap_' + '0'.repeat(24),
      authorization: {
        from: SETTLEMENT_TREASURY,
        to: MERCHANT,
        value: '50000',
        validAfter: '0',
        validBefore: '1',
        nonce: SECRET.nonce,
      },
      txHash: SETTLEMENT_TX,
      blockNumber: '12',
      groupId: 'lg_' + '1'.repeat(24),
      correlationId: SECRET.correlation,
    },
    providerAttested: {
      status: 'ATTESTED',
      attestedAt: '2026-11-24T10:00:02Z',
      fields: { domain: 'x.test', available: true, checkedAt: '2026-11-24T10:00:02Z' },
      channel: SECRET.channel,
    },
    serviceVerified: {
      verified: true,
      method: 'RDAP',
      source: 'http://127.0.0.1:2/domain/x.test',
      checkedAt: '2026-11-24T10:00:03Z',
      detail: 'not registered (404)',
      accountId: SECRET.account,
    },
    refund: { amount: '1', to: PAYER, sessionId: SECRET.session },
    resolution: { resolvedBy: SECRET.channel, evidence: SECRET.payload },
    pollRef: 'esc_' + '0'.repeat(24),
    reservationId: 'rsv_' + '0'.repeat(24),
  };
}

function keys(value: unknown): string[] {
  return Object.keys(value as object);
}

test('the public body holds exactly the allow-listed keys, at every level', () => {
  const receipt = buildConsumerReceipt(fullRecord());
  expect(keys(receipt).sort()).toEqual([...ALLOW_LIST.top].sort());
  expect(keys(receipt.policy).sort()).toEqual([...ALLOW_LIST.policy].sort());
  expect(keys(receipt.providerAttested).sort()).toEqual([...ALLOW_LIST.providerAttested].sort());
  expect(keys(receipt.serviceVerified).sort()).toEqual([...ALLOW_LIST.serviceVerified].sort());
  expect(keys(receipt.paymentLegs).sort()).toEqual([...ALLOW_LIST.paymentLegs].sort());
  expect(keys(receipt.paymentLegs.funding).sort()).toEqual([...ALLOW_LIST.leg].sort());
  expect(keys(receipt.paymentLegs.settlement).sort()).toEqual([...ALLOW_LIST.leg].sort());
  expect(keys(receipt.anchor).sort()).toEqual([...ALLOW_LIST.anchor].sort());
  expect(keys(receipt.integrity).sort()).toEqual([...ALLOW_LIST.integrity].sort());
  // The two open values: the merchant's own answer fields, and the verification's detail.
  expect(receipt.providerAttested!.fields).toEqual({
    domain: 'x.test',
    available: true,
    checkedAt: '2026-11-24T10:00:02Z',
  });
  expect(receipt.serviceVerified!.detail).toBe('not registered (404)');
});

test('fields of the private record never become public: no session, correlation, channel, account or payload', () => {
  const text = JSON.stringify(buildConsumerReceipt(fullRecord()));
  for (const secret of Object.values(SECRET)) expect(text).not.toContain(secret);
  for (const name of ['sessionId', 'correlationId', 'accountId', 'channel', 'resolvedBy', 'params'])
    expect(text).not.toContain(`"${name}"`);
  // The decision receipt id of the preflight, the payment id, the ledger groups: private too.
  expect(text).not.toContain('99'.repeat(32));
  expect(text).not.toContain('sp_SECRET');
  expect(text).not.toContain('lg_');
});

test('the values: both legs from the record, lowercase; fee, spread, policy; anchor PENDING', () => {
  const receipt = buildConsumerReceipt(fullRecord());
  expect(receipt).toMatchObject({
    intentId: INTENT_ID,
    capability: 'domains.check',
    state: 'DELIVERY_VERIFIED',
    createdAt: '2026-11-24T10:00:00.000Z',
    updatedAt: '2026-11-24T10:00:03.250Z',
    policy: {
      policyId: '7602',
      policyHash: '0x' + 'ab'.repeat(32),
      policyVersion: 3,
      decision: 'APPROVED',
    },
    paymentLegs: {
      funding: {
        chain: 'eip155:196',
        asset: USDT0,
        amount: '50250',
        sender: PAYER.toLowerCase(),
        recipient: FUNDING_TREASURY,
        txHash: FUNDING_TX.toLowerCase(),
      },
      settlement: {
        chain: 'eip155:8453',
        asset: USDC,
        amount: '50000',
        sender: SETTLEMENT_TREASURY,
        recipient: MERCHANT,
        txHash: SETTLEMENT_TX,
      },
    },
    fee: '0',
    spread: '250',
    anchor: { state: 'PENDING', receiptId: consumerReceiptId(INTENT_ID) },
  });
});

test('providerAttested and serviceVerified stay apart, even when they disagree', () => {
  const record = fullRecord();
  const receipt = buildConsumerReceipt({
    ...record,
    serviceVerified: { ...record.serviceVerified, verified: false, detail: 'registered' },
  });
  expect(receipt.providerAttested).toEqual({
    status: 'ATTESTED',
    attestedAt: '2026-11-24T10:00:02Z',
    fields: { domain: 'x.test', available: true, checkedAt: '2026-11-24T10:00:02Z' },
  });
  expect(receipt.serviceVerified).toEqual({
    verified: false,
    method: 'RDAP',
    source: 'http://127.0.0.1:2/domain/x.test',
    checkedAt: '2026-11-24T10:00:03Z',
    detail: 'registered',
  });
  // Anything but a literal true is not verified.
  for (const verified of ['true', 1, null, undefined])
    expect(
      buildConsumerReceipt({ ...record, serviceVerified: { ...record.serviceVerified, verified } })
        .serviceVerified!.verified,
    ).toBe(false);
});

test('a funded intent not paid on yet: settlement, providerAttested and serviceVerified are null', () => {
  const record = fullRecord();
  const receipt = buildConsumerReceipt({
    ...record,
    state: 'FUNDED',
    settlement: null,
    providerAttested: null,
    serviceVerified: undefined,
  });
  expect(receipt.paymentLegs.settlement).toBeNull();
  expect(receipt.paymentLegs.funding).not.toBeNull();
  expect(receipt.providerAttested).toBeNull();
  expect(receipt.serviceVerified).toBeNull();
  // Signed but not seen on chain (no txHash): not a payment leg yet.
  const signed = buildConsumerReceipt({
    ...record,
    settlement: { authorization: record.settlement!.authorization },
  });
  expect(signed.paymentLegs.settlement).toBeNull();
  expect(keys(receipt).sort()).toEqual([...ALLOW_LIST.top].sort());
});

/** RFC 8785 for what a receipt holds (strings, booleans, null, safe integers, objects, arrays). */
function ownJcs(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new Error('not covered');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(ownJcs).join(',')}]`;
  const entries = Object.keys(value)
    .sort() // UTF-16 code unit order, as RFC 8785 §3.2.3 asks
    .map((key) => `${JSON.stringify(key)}:${ownJcs((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

test('integrity.digest = keccak256(JCS(body without integrity and anchor)), recomputed independently', () => {
  const receipt: ConsumerReceipt = buildConsumerReceipt(fullRecord());
  const {
    integrity,
    anchor: _anchor,
    ...covered
  } = JSON.parse(JSON.stringify(receipt)) as Record<string, unknown> & {
    integrity: { digest: string };
  };
  const viaPackage = canonicalize(covered)!;
  expect(ownJcs(covered)).toBe(viaPackage);
  expect(integrity.digest).toBe(keccak256(toBytes(viaPackage)));
  expect(consumerReceiptDigest(receipt)).toBe(integrity.digest);
  // Key order does not matter; any change of content does; the anchor does not.
  const reversed = Object.fromEntries(Object.entries(covered).reverse());
  expect(keccak256(toBytes(canonicalize(reversed)!))).toBe(integrity.digest);
  expect(consumerReceiptDigest({ ...receipt, state: 'COMPLETED' })).not.toBe(integrity.digest);
  expect(
    consumerReceiptDigest({
      ...receipt,
      anchor: { state: 'PENDING', receiptId: '0x' + '0'.repeat(64) },
    }),
  ).toBe(integrity.digest);
});

test('the receipt id is 0x + 64 hex, the same on every write of an intent, different per intent', () => {
  const id = consumerReceiptId(INTENT_ID);
  expect(id).toMatch(/^0x[0-9a-f]{64}$/);
  expect(consumerReceiptId(INTENT_ID)).toBe(id);
  expect(consumerReceiptId('ci_' + 'f'.repeat(24))).not.toBe(id);
  expect(id).toBe(keccak256(toBytes(`spend-control/consumer-receipt/v1:${INTENT_ID}`)));
});

test('a resolution is public as {outcome, resolvedAt} only; a receipt without one keeps its digest', () => {
  const without = buildConsumerReceipt(fullRecord());
  expect(without).not.toHaveProperty('resolution');
  const resolved = buildConsumerReceipt({
    ...fullRecord(),
    resolution: {
      outcome: 'REFUND',
      resolvedAt: '2026-11-24T11:00:00.000Z',
      resolvedBy: SECRET.channel,
      evidence: SECRET.payload,
    },
  } as never);
  expect(resolved.resolution).toEqual({
    outcome: 'REFUND',
    resolvedAt: '2026-11-24T11:00:00.000Z',
  });
  const text = JSON.stringify(resolved);
  expect(text).not.toContain(SECRET.channel);
  expect(text).not.toContain(SECRET.payload);
  // A chain finding alone is no resolution.
  const found = buildConsumerReceipt({
    ...fullRecord(),
    resolution: { chainFinding: { status: 'OPEN' } },
  } as never);
  expect(found).not.toHaveProperty('resolution');
  expect(found.integrity.digest).toBe(without.integrity.digest);
  expect(resolved.integrity.digest).not.toBe(without.integrity.digest);
});
