import fc from 'fast-check';
import {
  type AuthorizationFacts,
  type AuthorizationUseFacts,
  type UseReceipt,
  judgeAuthorization,
} from './authorizationJudgement';

const TX = '0x' + '1'.repeat(64);
const VALID_BEFORE = 1_000n;

const unused = (chainTimeS: bigint): AuthorizationFacts => ({
  used: false,
  chainTimeS,
  validBefore: VALID_BEFORE,
});
const usedBy = (receipt: UseReceipt, foundByEvent = true): AuthorizationFacts => ({
  used: true,
  use: { txHash: TX, foundByEvent, receipt },
});

describe('judgeAuthorization', () => {
  it('an unused authorization before validBefore is OPEN: anyone holding it may still submit it', () => {
    expect(judgeAuthorization(unused(VALID_BEFORE - 1n))).toEqual({
      status: 'OPEN',
      because: 'STILL_USABLE',
    });
  });

  it('an unused authorization at or past validBefore is NOT_PAID for good', () => {
    for (const chainTimeS of [VALID_BEFORE, VALID_BEFORE + 1n])
      expect(judgeAuthorization(unused(chainTimeS))).toEqual({
        status: 'NOT_PAID',
        because: 'EXPIRED_UNUSED',
      });
  });

  it('a used authorization whose transaction carries the expected Transfer is PAID by it', () => {
    expect(judgeAuthorization(usedBy('PAYS'))).toEqual({ status: 'PAID', txHash: TX });
    // A recorded settlement (not found by event) that pays is as good as one found by event.
    expect(judgeAuthorization(usedBy('PAYS', false))).toEqual({ status: 'PAID', txHash: TX });
  });

  it('a nonce spent by an event-named transaction without the Transfer is NOT_PAID', () => {
    expect(judgeAuthorization(usedBy('PAYS_SOMETHING_ELSE'))).toEqual({
      status: 'NOT_PAID',
      because: 'USED_BY_OTHER_TRANSACTION',
      usedByTxHash: TX,
    });
  });

  it('a used authorization whose transaction is unknown, unreadable or only guessed stays OPEN', () => {
    const open = { status: 'OPEN', because: 'USE_NOT_READABLE' };
    expect(judgeAuthorization({ used: true })).toEqual(open);
    expect(judgeAuthorization(usedBy('UNREADABLE'))).toEqual(open);
    expect(judgeAuthorization(usedBy('UNREADABLE', false))).toEqual(open);
    expect(judgeAuthorization(usedBy('PAYS_SOMETHING_ELSE', false))).toEqual(open);
  });

  const seconds = fc.bigInt({ min: 0n, max: 2n ** 64n });
  const useArb = fc.option(
    fc.record<AuthorizationUseFacts>({
      txHash: fc.constant(TX),
      foundByEvent: fc.boolean(),
      receipt: fc.constantFrom<UseReceipt>('PAYS', 'PAYS_SOMETHING_ELSE', 'UNREADABLE'),
    }),
    { nil: undefined },
  );
  const factsArb: fc.Arbitrary<AuthorizationFacts> = fc.oneof(
    useArb.map((use): AuthorizationFacts => (use ? { used: true, use } : { used: true })),
    fc.tuple(seconds, seconds).map(([chainTimeS, validBefore]): AuthorizationFacts => ({
      used: false,
      chainTimeS,
      validBefore,
    })),
  );

  it('property: an unused authorization, once NOT_PAID, stays NOT_PAID at every later chain time', () => {
    fc.assert(
      fc.property(seconds, seconds, seconds, (chainTimeS, validBefore, laterBy) => {
        const now = judgeAuthorization({ used: false, chainTimeS, validBefore });
        const later = judgeAuthorization({
          used: false,
          chainTimeS: chainTimeS + laterBy,
          validBefore,
        });
        expect(now.status).not.toBe('PAID');
        if (now.status === 'NOT_PAID') expect(later).toEqual(now);
        expect(now.status === 'NOT_PAID').toBe(chainTimeS >= validBefore);
      }),
    );
  });

  it('property: PAID exactly when the using transaction pays; NOT_PAID only with proof', () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const judgement = judgeAuthorization(facts);
        const pays = facts.used && facts.use?.receipt === 'PAYS';
        expect(judgement.status === 'PAID').toBe(pays);
        if (judgement.status !== 'NOT_PAID') return;
        const proof = facts.used
          ? facts.use?.foundByEvent === true && facts.use.receipt === 'PAYS_SOMETHING_ELSE'
          : facts.chainTimeS >= facts.validBefore;
        expect(proof).toBe(true);
      }),
    );
  });
});
