// The dashboard's receipt page in a real browser (headless Chromium through playwright-core)
// against a real purchase: a domains.check bought through the consumer path on the devnet chains
// (merchant, RDAP registry, anchoring worker with rounds stepped by hand). The page shows both
// payment legs with their transactions and the anchor state, PENDING, then ANCHORED without a
// reload once the anchoring round has run. Regions are found by role and accessible name.
import type { Page } from 'playwright-core';
import { launchBrowser, screenshot, type TestBrowser } from '../support/browser';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { purchase, untilState } from '../support/purchases';
import { until } from '../support/websockets';

let world: ConsumerWorld;
let buyer: TestConsumer;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  world = await startConsumerWorld({
    rdap: true,
    anchoring: { batchSize: 100, batchSeconds: 0 },
  });
  buyer = await newConsumer(world.stack, world.devnet, { mintAtomic: 10_000_000n });
  browser = await launchBrowser();
  page = await (
    await browser.browser.newContext({ viewport: { width: 1100, height: 900 } })
  ).newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

function legRow(name: 'Funding' | 'Settlement') {
  return page
    .getByRole('table', { name: 'Payment legs' })
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name }) });
}

test('a purchase’s receipt page shows both legs and turns ANCHORED live', async () => {
  const intentId = await purchase(world, buyer, 'dashboard-receipt.test');
  await untilState(world, intentId, 'COMPLETED');
  const receipt: any = await (
    await fetch(`${world.stack.url}/consumer/receipt/${intentId}`)
  ).json();
  const { funding, settlement } = receipt.paymentLegs;
  expect(funding.txHash).toMatch(/^0x[0-9a-f]{64}$/);
  expect(settlement.txHash).toMatch(/^0x[0-9a-f]{64}$/);
  expect(funding.txHash).not.toBe(settlement.txHash);
  const receiptId = receipt.anchor.receiptId as string;
  expect(receipt.anchor).toEqual({ state: 'PENDING', receiptId });

  await page.goto(`${world.stack.url}/#/receipt/${intentId}`);
  await page.getByRole('heading', { name: /^Receipt / }).waitFor();
  // Each leg's row names its own transaction (shortened on screen, whole on hover).
  await legRow('Funding').getByTitle(funding.txHash, { exact: true }).waitFor();
  await legRow('Settlement').getByTitle(settlement.txHash, { exact: true }).waitFor();
  const anchor = page.getByRole('status', { name: 'Anchor state' });
  await anchor.getByText('PENDING', { exact: true }).waitFor();
  // The page follows the receipt over anchorUpdated before the round runs.
  await until(
    () => world.stack.stack.gateway.fanout.listenerCount(`anchorUpdated:${receiptId}`) >= 1,
    'the page listening to its receipt',
  );

  const round = await world.stack.stack.anchoring!.runOnce();
  expect(round).toMatchObject({ ran: true, failed: 0 });
  await anchor.getByText('ANCHORED', { exact: true }).waitFor({ timeout: 10_000 });
  const after: any = await (await fetch(`${world.stack.url}/consumer/receipt/${intentId}`)).json();
  expect(after.anchor).toMatchObject({ state: 'ANCHORED', receiptId });
  await anchor.getByText(`in block ${after.anchor.blockNumber}`, { exact: false }).waitFor();
  await screenshot(page, 'receipt-anchored');
});
