// The bounds the service holds a merchant to (issue 27, item 6), end to end: the real devnet
// domains merchant behind a hostile front on 127.0.0.1 (test/support/hostileMerchant.ts), the
// service with x402 on the funding chain and the execution worker. The paid request is never
// followed to another origin (a 307 elsewhere does not receive the payment signature); a huge
// answer is not read whole (the front counts what it could write before the service hung up); a
// 402 with an amount the service cannot quote is 502 PROVIDER_UNAVAILABLE, never a 500.
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { devnetConsumerRails } from '../../devnet/consumerRails';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { startDevnetDomainsMerchant } from '../../devnet/merchants/domains/start';
import type { ConsumerRails } from '../../subgraphs/kit';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { type HostileMerchant, startHostileMerchant } from '../support/hostileMerchant';
import { createIntent, fundAndExecute, untilIntent } from '../support/purchases';
import { postJson, startTestStack, type TestStack } from '../support/stack';

/** Far more than any answer a domains check needs (the service stops at 64 KiB). */
const HUGE_BYTES = 256 * 1024 * 1024;
const UNDECIDED = ['FUNDED', 'EXECUTION_QUEUED', 'PROVIDER_PAYMENT_PENDING'];

let devnet: DevnetChains;
let merchant: DomainsMerchant;
let front: HostileMerchant;
let rails: ConsumerRails;
let stack: TestStack;
let buyer: TestConsumer;

function world() {
  return { stack, rails, merchant };
}

function domain(tag: string): string {
  return `bounds-${tag}-${Date.now().toString(36)}.test`;
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  merchant = await startDevnetDomainsMerchant({
    settlement: devnet.info.chains.settlement,
    dataDir: null,
  });
  front = await startHostileMerchant(merchant.url);
  rails = devnetConsumerRails(devnet.info, { 'spendctl-domains': front.url });
  stack = await startTestStack({
    x402: { devnet },
    consumer: {
      rails,
      execution: {
        treasuryKey: devnet.keys.treasury,
        relayerKey: devnet.keys.relayer,
        intervalMs: 0,
      },
    },
  });
  buyer = await newConsumer(stack, devnet, { mintAtomic: 10_000_000n });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await front?.close();
  await merchant?.stop();
  await devnet?.stop();
});

afterEach(() => {
  front.mode = { kind: 'pass' };
});

describe('a malformed 402 from the merchant', () => {
  it.each([
    ['a funding amount beyond the wire’s 30 digits', '9'.repeat(31)],
    ['an amount beyond uint256', '9'.repeat(78)],
  ])('%s: 502 PROVIDER_UNAVAILABLE, nothing stored', async (_name, amount) => {
    front.mode = { kind: 'skewAmount', amount };
    const created = await postJson(
      stack.url,
      '/consumer/intents',
      { capability: 'domains.check', params: { domain: domain('skew') } },
      buyer.session,
    );
    expect([created.status, created.body.code]).toEqual([502, 'PROVIDER_UNAVAILABLE']);
    const { rows } = await stack.db.pool.query(
      `SELECT 1 FROM intent.consumer_intents WHERE wallet = $1 AND quote->'providerCost'->>'amount' = $2`,
      [buyer.account.address.toLowerCase(), amount],
    );
    expect(rows).toEqual([]);
  });
});

describe('the paid request to the merchant', () => {
  it('is not followed: a 307 to another origin never receives the payment signature', async () => {
    const intentId = (await createIntent(world(), buyer, domain('redirect'))).intent
      .intentId as string;
    front.mode = { kind: 'redirectPaid' };
    await fundAndExecute(world(), buyer, intentId);
    await untilIntent(world(), intentId, (row) => !UNDECIDED.includes(row.state));
    expect(front.elsewhereRequests).toEqual([]);
  });

  it('stops reading at its byte bound: a huge answer is not read whole', async () => {
    const intentId = (await createIntent(world(), buyer, domain('huge'))).intent.intentId as string;
    front.mode = { kind: 'hugePaid', hugeBytes: HUGE_BYTES };
    await fundAndExecute(world(), buyer, intentId);
    await untilIntent(world(), intentId, (row) => !UNDECIDED.includes(row.state));
    await untilIntent(world(), intentId, () => front.hugeWritten.length > 0);
    // Socket buffers hold a few MiB at most; the rest was never asked for.
    expect(front.hugeWritten[0]).toBeLessThan(HUGE_BYTES / 4);
  });
});
