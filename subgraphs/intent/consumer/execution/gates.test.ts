// The approval gate's binding of the paid quote to the decided SpendIntent (issue #27 item 2): the
// payee, the URL and the amounts execution would pay must be the ones the policy decided on. Pure:
// built rows, no database (the e2e suite shows the database refusing the edit in the first place).
import type { ConsumerRails } from '../../../kit';
import type { ConsumerIntentRow } from '../store';
import { quoteBindingProblem } from './gates';
import { quoteOf } from './quoteFields';

const PAY_TO = `0x${'ab'.repeat(20)}`;
const URL_PAID = 'http://127.0.0.1:4000/domains/check?domain=free.test';
const RAILS = {
  settlement: { decimals: 6 },
  funding: { decimals: 6 },
} as unknown as ConsumerRails;

function rowWith(
  quoteChange: Record<string, unknown> = {},
  merchantChange: Record<string, unknown> = {},
  decidedChange: Record<string, unknown> = {},
): ConsumerIntentRow {
  const quote = {
    quoteId: 'cq_000000000000000001',
    expiresAt: '2030-01-01T00:00:00.000Z',
    providerCost: { network: 'eip155:8453', asset: `0x${'01'.repeat(20)}`, amount: '50000' },
    feeBps: 0,
    fee: '0',
    spreadBps: 50,
    spread: '250',
    funding: { network: 'eip155:196', asset: `0x${'02'.repeat(20)}`, amount: '50250' },
    merchant: { url: URL_PAID, method: 'GET', payTo: PAY_TO, ...merchantChange },
    ...quoteChange,
  };
  return {
    quote,
    spendIntent: { recipient: PAY_TO, endpoint: URL_PAID, amount: '50250', ...decidedChange },
  } as unknown as ConsumerIntentRow;
}

const problemOf = (row: ConsumerIntentRow) => quoteBindingProblem(row, quoteOf(row), RAILS);

describe('quoteBindingProblem', () => {
  it('accepts the quote the SpendIntent was decided on', () => {
    expect(problemOf(rowWith())).toBeNull();
  });

  it('refuses a provider cost the decided funding amount does not cover (or overpays)', () => {
    const raised = rowWith({
      providerCost: { network: 'eip155:8453', asset: `0x${'01'.repeat(20)}`, amount: '50001' },
    });
    expect(problemOf(raised)).toBe('a provider cost of 50001 is not what the decided 50250 funds');
    const lowered = rowWith({
      providerCost: { network: 'eip155:8453', asset: `0x${'01'.repeat(20)}`, amount: '40000' },
    });
    expect(problemOf(lowered)).toMatch(/^a provider cost of 40000/);
    expect(problemOf(rowWith({ spread: '251' }))).toMatch(/^a provider cost of 50000/);
  });

  it('refuses another payee, another URL or another funding amount than the decision named', () => {
    expect(problemOf(rowWith({}, { payTo: `0x${'cd'.repeat(20)}` }))).toMatch(
      /^the quote pays 0xcd/,
    );
    expect(problemOf(rowWith({}, { url: `${URL_PAID}x` }))).toMatch(/^the quote pays for /);
    expect(
      problemOf(
        rowWith({ funding: { network: 'eip155:196', asset: `0x${'02'.repeat(20)}`, amount: '1' } }),
      ),
    ).toMatch(/^the quote is funded with 1, the decision was for 50250/);
    expect(problemOf(rowWith({}, {}, { recipient: `0x${'cd'.repeat(20)}` }))).toMatch(
      /decision was for 0xcd/,
    );
  });

  it('refuses a quote without its rates, and a row without a decided SpendIntent', () => {
    expect(problemOf(rowWith({ feeBps: undefined }))).toBe('the quote names no fee or spread rate');
    expect(problemOf({ ...rowWith(), spendIntent: null } as ConsumerIntentRow)).toBe(
      'no decided SpendIntent is stored',
    );
  });
});
