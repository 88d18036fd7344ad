// The booked legs and spend facts of consumer intents, from the rows as the purchase path leaves
// them: parties and transaction from the intent's record, amounts from its ledger groups.
import type { ConsumerRails } from '../../kit';
import type { ConsumerIntentRow } from '../consumer/store';
import { bookedLegs, factsOf, legGroupIds } from './legs';

const TREASURY = `0x${'a'.repeat(40)}` as const;
const PAYER = `0x${'B'.repeat(40)}`;
const MERCHANT = `0x${'c'.repeat(40)}`;
const rail = {
  network: 'eip155:196',
  chainId: 196,
  rpcUrl: 'http://127.0.0.1:1',
  token: `0x${'d'.repeat(40)}` as const,
  decimals: 6,
  symbol: 'USDT0',
  name: 'USD₮0',
  version: '1',
  treasury: TREASURY,
};
const rails: ConsumerRails = {
  funding: rail,
  settlement: { ...rail, network: 'eip155:8453', chainId: 8453 },
  providers: {},
  spreadBps: 50n,
};

function intent(changes: Partial<ConsumerIntentRow>): ConsumerIntentRow {
  return {
    intentId: 'ci_000000000000000000000001',
    policyId: '7',
    wallet: PAYER.toLowerCase(),
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: {},
    idempotencyKey: null,
    state: 'COMPLETED',
    stateVersion: 1,
    stateReason: null,
    stateReasonCode: null,
    quote: { fee: '0', spread: '250', merchant: { payTo: MERCHANT } },
    quoteExpiresAt: null,
    fundingAmount: 50_250n,
    spendIntent: { agentId: 'bot-1' },
    intentHash: null,
    decision: null,
    pollRef: null,
    reservationId: null,
    funding: { payer: PAYER, payTo: TREASURY, amount: '50250', txHash: '0x01', groupId: 'lg_f' },
    settlement: { txHash: '0x02', groupId: 'lg_s' },
    providerAttested: null,
    refund: null,
    resolution: null,
    serviceVerified: { verified: true },
    deliveryAttempts: 0,
    deliveryNextAttemptAt: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    ...changes,
  };
}

const amounts = new Map([
  ['lg_f', 50_250n],
  ['lg_s', 50_000n],
  ['lg_owed', 0n],
  ['lg_paid', 50_250n],
]);

test('a paid purchase books its funding and settlement legs with the ledger’s amounts', () => {
  const row = intent({});
  expect(legGroupIds([row])).toEqual(['lg_f', 'lg_s']);
  expect(bookedLegs([row], rails, amounts)).toEqual([
    {
      rail: 'funding',
      kind: 'FUNDING',
      intentId: row.intentId,
      txHash: '0x01',
      from: PAYER.toLowerCase(),
      to: TREASURY,
      amountAtomic: 50_250n,
    },
    {
      rail: 'settlement',
      kind: 'SETTLEMENT',
      intentId: row.intentId,
      txHash: '0x02',
      from: TREASURY,
      to: MERCHANT,
      amountAtomic: 50_000n,
    },
  ]);
  expect(factsOf(row)).toMatchObject({
    fundedAtomic: 50_250n,
    spreadAtomic: 250n,
    refundedAtomic: null,
    agentId: 'bot-1',
    deliveryVerified: true,
  });
});

test('a refunded purchase books its refund leg from the PAID group; a funding group missing from the ledger counts 0', () => {
  const row = intent({
    state: 'REFUNDED',
    settlement: null,
    serviceVerified: null,
    funding: { payer: PAYER, amount: '50250', txHash: '0x01', groupId: 'lg_gone' },
    refund: {
      amount: '50250',
      to: PAYER,
      txHash: '0x03',
      groupIds: ['lg_owed', 'lg_paid'],
      refundedAt: '2026-11-24T00:00:00Z',
    },
  });
  const legs = bookedLegs([row], rails, amounts);
  expect(legs.map((leg) => [leg.kind, leg.amountAtomic])).toEqual([
    ['FUNDING', 0n],
    ['REFUND', 50_250n],
  ]);
  expect(factsOf(row)).toMatchObject({ refundedAtomic: 50_250n, deliveryVerified: null });
});

test('an unfunded intent books nothing and spent nothing; a refund not yet sent is no leg', () => {
  expect(bookedLegs([intent({ funding: null, settlement: null })], rails, amounts)).toEqual([]);
  expect(factsOf(intent({ funding: null })).fundedAtomic).toBeNull();
  const owed = intent({
    settlement: null,
    refund: { amount: '50250', to: PAYER, groupIds: ['lg_owed'] },
  });
  expect(bookedLegs([owed], rails, amounts).map((leg) => leg.kind)).toEqual(['FUNDING']);
  expect(factsOf(owed).refundedAtomic).toBeNull();
});
