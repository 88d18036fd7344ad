import fc from 'fast-check';
import { type BookedLeg, type ChainTransfer, compareLegsWithChain } from './chainCheck';

const TREASURY = '0x' + 'a'.repeat(40);
const PAYER = '0x' + 'b'.repeat(40);
const MERCHANT = '0x' + 'c'.repeat(40);
const tx = (n: number) => '0x' + n.toString(16).padStart(64, '0');

const funding: BookedLeg = {
  rail: 'funding',
  kind: 'FUNDING',
  intentId: 'ci_1',
  txHash: tx(1),
  from: PAYER,
  to: TREASURY,
  amountAtomic: 50_250n,
};
const settlement: BookedLeg = {
  rail: 'settlement',
  kind: 'SETTLEMENT',
  intentId: 'ci_1',
  txHash: tx(2),
  from: TREASURY,
  to: MERCHANT,
  amountAtomic: 50_000n,
};

function transferOf(leg: BookedLeg, value = leg.amountAtomic, logIndex = 0): ChainTransfer {
  return {
    rail: leg.rail,
    txHash: leg.txHash!.toUpperCase().replace('0X', '0x'),
    logIndex,
    blockNumber: 7n,
    from: leg.from.toUpperCase().replace('0X', '0x'),
    to: leg.to,
    valueAtomic: value,
  };
}

test('legs that match their transfers (any address case) leave no difference', () => {
  const check = compareLegsWithChain(
    [funding, settlement],
    [transferOf(funding), transferOf(settlement)],
  );
  expect(check.differences).toEqual([]);
  expect(check.matchedLegs).toBe(2);
  expect(check.totals).toEqual([
    { rail: 'funding', bookedAtomic: '50250', onchainAtomic: '50250' },
    { rail: 'settlement', bookedAtomic: '50000', onchainAtomic: '50000' },
  ]);
});

test('a booked leg with no transfer, one with another amount, and an unbooked transfer are each listed', () => {
  const outside: ChainTransfer = {
    rail: 'funding',
    txHash: tx(9),
    logIndex: 3,
    blockNumber: 8n,
    from: TREASURY,
    to: PAYER,
    valueAtomic: 1_234n,
  };
  const check = compareLegsWithChain(
    [funding, settlement],
    [transferOf(funding, 50_000n), outside],
  );
  expect(check.matchedLegs).toBe(0);
  expect(check.differences).toEqual([
    expect.objectContaining({
      kind: 'AMOUNT_MISMATCH',
      intentId: 'ci_1',
      bookedAtomic: '50250',
      onchainAtomic: '50000',
      deltaAtomic: '-250',
    }),
    expect.objectContaining({
      kind: 'BOOKED_NOT_ON_CHAIN',
      rail: 'settlement',
      bookedAtomic: '50000',
      onchainAtomic: '0',
      deltaAtomic: '-50000',
    }),
    expect.objectContaining({
      kind: 'ON_CHAIN_NOT_BOOKED',
      intentId: null,
      txHash: tx(9),
      from: TREASURY,
      to: PAYER,
      deltaAtomic: '1234',
    }),
  ]);
});

test('a leg without a transaction hash is booked but not on chain', () => {
  const check = compareLegsWithChain([{ ...funding, txHash: null }], []);
  expect(check.differences.map((d) => d.kind)).toEqual(['BOOKED_NOT_ON_CHAIN']);
});

test('the same log reported twice counts once', () => {
  const check = compareLegsWithChain([funding], [transferOf(funding), transferOf(funding)]);
  expect(check.differences).toEqual([]);
});

test('property: the deltas of the differences add up to onchain minus booked, per rail', () => {
  const amount = fc.bigInt({ min: 1n, max: 10n ** 12n });
  fc.assert(
    fc.property(
      fc.array(fc.tuple(amount, fc.option(amount), fc.boolean()), { maxLength: 12 }),
      fc.array(amount, { maxLength: 5 }),
      (legSpecs, strays) => {
        const legs: BookedLeg[] = legSpecs.map(([booked], i) => ({
          ...funding,
          intentId: `ci_${i}`,
          txHash: tx(i + 1),
          amountAtomic: booked,
        }));
        const transfers: ChainTransfer[] = legSpecs.flatMap(([booked, other, present], i) =>
          present ? [transferOf(legs[i], other ?? booked)] : [],
        );
        strays.forEach((value, i) =>
          transfers.push({ ...transferOf(funding, value), txHash: tx(1000 + i) }),
        );
        const check = compareLegsWithChain(legs, transfers);
        const delta = check.differences.reduce((s, d) => s + BigInt(d.deltaAtomic), 0n);
        const line = check.totals.find((t) => t.rail === 'funding')!;
        expect(delta).toBe(BigInt(line.onchainAtomic) - BigInt(line.bookedAtomic));
        expect(
          check.matchedLegs + check.differences.filter((d) => d.intentId !== null).length,
        ).toBe(legs.length);
      },
    ),
  );
});
