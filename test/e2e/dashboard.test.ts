// The dashboard in a real browser (headless Chromium through playwright-core) against the real
// stack: an owner signs in with an injected EIP-1193 wallet (a viem account), sees an agent's
// escalation arrive live, approves (with and without an EIP-712 signature) and denies it, sees an
// expired one as denied, pauses and resumes a policy and gets field errors from the update form;
// another owner sees none of it. Controls are found by role and accessible name.
import type { BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createEscalatingPolicy,
  escalatingIntent,
  preflight,
  type TestPolicy,
  waitForEscalationSubscribers,
} from '../support/escalations';
import { launchBrowser, screenshot, type TestBrowser, walletContext } from '../support/browser';
import { graphql, startTestStack, type TestStack } from '../support/stack';

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
let offsetMs = 0;
const now = () => Date.now() + offsetMs;
let stack: TestStack;
let policy: TestPolicy;
let quick: TestPolicy;
let browser: TestBrowser;
let ownerContext: BrowserContext;
let page: Page;

const LIVE_WITHIN_MS = 2_000;

async function signInOnPage(target: Page): Promise<void> {
  await target.getByRole('button', { name: 'Sign in with wallet' }).click();
  await target.getByRole('button', { name: 'Sign out' }).waitFor();
}

function escalationCard(target: Page, amount: string) {
  return target.getByRole('article', { name: new RegExp(`^Escalation ${amount} USDT0 to`) });
}

beforeAll(async () => {
  stack = await startTestStack({
    now: () => new Date(now()),
    escalationWorker: { adapters: {}, dashboardBaseUrl: 'http://127.0.0.1/', intervalMs: 0 },
  });
  policy = await createEscalatingPolicy(stack, owner.address.toLowerCase());
  quick = await createEscalatingPolicy(stack, owner.address.toLowerCase(), {
    name: 'quick expiry',
    escalation: { timeoutMinutes: 1, channels: ['webhook'] },
  });
  browser = await launchBrowser();
  ownerContext = await walletContext(browser.browser, owner);
  page = await ownerContext.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

test('the page and its hashed assets are served with a strict CSP and nosniff, index.html never cached and hashed assets immutable', async () => {
  const index = await fetch(`${stack.url}/`);
  expect(index.status).toBe(200);
  expect(index.headers.get('cache-control')).toBe('no-store');
  const csp = index.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("default-src 'none'");
  const html = await index.text();
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  expect(asset).toBeDefined();
  const script = await fetch(`${stack.url}${asset}`);
  expect(script.status).toBe(200);
  expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  expect(script.headers.get('content-security-policy')).toBe(csp);
  expect(script.headers.get('x-content-type-options')).toBe('nosniff');
  expect(index.headers.get('x-content-type-options')).toBe('nosniff');
});

test('sign in with the wallet, then an agent’s escalation appears live and Approve resolves it', async () => {
  await page.goto(`${stack.url}/#/escalations`);
  await signInOnPage(page);
  await page.getByText('Live: new escalations appear here').waitFor();
  await waitForEscalationSubscribers(stack, 1);
  await screenshot(page, 'signed-in');

  const intent = escalatingIntent(policy, now(), { amount: '1500000' });
  const escalated = await preflight(stack, policy, intent);
  expect(escalated.decision).toBe('ESCALATED_THRESHOLD');
  const card = escalationCard(page, '1.50');
  await card.waitFor({ timeout: LIVE_WITHIN_MS });
  await card.getByText('Waiting for you').waitFor();
  await card.getByText(/left$/).waitFor();
  await screenshot(page, 'escalations');

  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  await card.getByText('Approved').waitFor();
  const bound = await preflight(stack, policy, intent);
  expect(bound.decision).toBe('APPROVED');
});

test('Approve with the wallet’s EIP-712 signature; Deny', async () => {
  const signedIntent = escalatingIntent(policy, now(), { amount: '1600000' });
  await preflight(stack, policy, signedIntent);
  const signedCard = escalationCard(page, '1.60');
  await signedCard.waitFor({ timeout: LIVE_WITHIN_MS });
  await signedCard.getByRole('button', { name: 'Approve with wallet signature' }).click();
  await signedCard.getByText('(signed)').waitFor();
  expect((await preflight(stack, policy, signedIntent)).decision).toBe('APPROVED');

  const deniedIntent = escalatingIntent(policy, now(), { amount: '1700000' });
  const asked = await preflight(stack, policy, deniedIntent);
  const deniedCard = escalationCard(page, '1.70');
  await deniedCard.waitFor({ timeout: LIVE_WITHIN_MS });
  await deniedCard.getByRole('button', { name: 'Deny' }).click();
  await deniedCard.getByText('Denied', { exact: true }).waitFor();
  const status = await fetch(`${stack.url}/escalation_status/${asked.escalation.pollRef}`);
  expect(await status.json()).toMatchObject({ state: 'DENIED', outcome: 'DENIED' });
});

test('an escalation nobody decides shows as denied once it expires', async () => {
  const intent = escalatingIntent(quick, now(), { amount: '1800000' });
  const asked = await preflight(stack, quick, intent);
  const card = escalationCard(page, '1.80');
  await card.waitFor({ timeout: LIVE_WITHIN_MS });
  offsetMs += 2 * 60_000;
  await stack.stack.worker?.runOnce();
  // The page reads it afresh (a reload re-reads every escalation; the bearer is gone with it).
  await page.reload();
  await signInOnPage(page);
  await escalationCard(page, '1.80')
    .getByText(/^Denied \(expired/)
    .waitFor();
  const status = await fetch(`${stack.url}/escalation_status/${asked.escalation.pollRef}`);
  expect(await status.json()).toMatchObject({ state: 'EXPIRED', outcome: 'DENIED' });
});

test('another owner signed in sees none of it', async () => {
  const context = await walletContext(browser.browser, stranger);
  try {
    const other = await context.newPage();
    await other.goto(`${stack.url}/#/escalations`);
    await signInOnPage(other);
    await other.getByText('Nothing is waiting for your decision.').waitFor();
    await other.getByText('No decided escalations yet.').waitFor();
    expect(await other.getByRole('article').count()).toBe(0);
    await other.goto(`${stack.url}/#/policies`);
    await other.getByText('You own no policies yet.').waitFor();
  } finally {
    await context.close();
  }
});

test('pause and resume a policy; the update form shows errors by field', async () => {
  await page.goto(`${stack.url}/#/policies`);
  const card = page.getByRole('article', { name: 'Policy research agent' }).first();
  await card.getByText(/^Spent /).waitFor();
  await screenshot(page, 'policies');
  for (const [click, then, state] of [
    ['Pause', 'Resume', 'PAUSED'],
    ['Resume', 'Pause', 'ACTIVE'],
  ] as const) {
    await card.getByRole('button', { name: `${click} research agent` }).click();
    await card.getByRole('button', { name: `${then} research agent` }).waitFor();
    const read = await graphql(
      stack.url,
      'query ($id: ID!) { policy(id: $id) { state } }',
      { id: policy.policyId },
      stack.adminToken,
    );
    expect(read.body.data.policy.state).toBe(state);
  }

  await card.getByText('Propose an update').click();
  const budget = card.getByLabel('Daily budget (USDT0)');
  await budget.fill('twelve');
  await card.getByRole('button', { name: 'Save new version' }).click();
  await card.getByText('Daily budget must be an amount like 12.50 (USDT0).').waitFor();
  expect(await budget.getAttribute('aria-invalid')).toBe('true');
  await screenshot(page, 'policy-update-errors');
});

const policyVersion = async (): Promise<number> =>
  (
    await graphql(
      stack.url,
      'query ($id: ID!) { policy(id: $id) { version } }',
      { id: policy.policyId },
      stack.adminToken,
    )
  ).body.data.policy.version;

test('the update form shows the server’s POLICY_RULES_INVALID by field', async () => {
  const before = await policyVersion();
  // A fresh page (the form of the test before holds a value the page refuses itself).
  await page.reload();
  await signInOnPage(page);
  await page.goto(`${stack.url}/#/policies`);
  const card = page.getByRole('article', { name: 'Policy research agent' }).first();
  await card.getByText(/^Spent /).waitFor();
  await card.getByText('Propose an update').click();
  const form = card.getByRole('form', { name: 'Update research agent' });
  // A well-formed amount the page accepts; only the server knows it exceeds the daily budget.
  const perCallCap = form.getByLabel('Per-call cap (USDT0)');
  await perCallCap.fill('1000000');
  await form.getByRole('button', { name: 'Save new version' }).click();
  await form.getByRole('alert').filter({ hasText: 'must not exceed dailyBudget' }).waitFor();
  expect(await perCallCap.getAttribute('aria-invalid')).toBe('true');
  const describedBy = await perCallCap.getAttribute('aria-describedby');
  expect(await page.locator(`[id="${describedBy}"]`).textContent()).toBe(
    'must not exceed dailyBudget',
  );
  expect(await form.getByLabel('Daily budget (USDT0)').getAttribute('aria-invalid')).toBe('false');
  expect(await policyVersion()).toBe(before);
  await screenshot(page, 'policy-update-server-errors');
});

test('activity and reconciliation views render for the owner', async () => {
  await page.goto(`${stack.url}/#/activity`);
  await page.getByRole('heading', { name: /^Activity of / }).waitFor();
  await page
    .getByRole('button', { name: /^ESCALATED_THRESHOLD/ })
    .first()
    .click();
  await page.getByRole('table', { name: /Rule trace/ }).waitFor();
  expect(
    await page
      .getByRole('table', { name: /Rule trace/ })
      .getByRole('row')
      .count(),
  ).toBe(15);
  await screenshot(page, 'activity');
  await page.goto(`${stack.url}/#/analyst`);
  await page.getByRole('button', { name: 'Reconcile' }).click();
  await page.getByRole('table', { name: /Report/ }).waitFor();
  await screenshot(page, 'reconciliation');
  await page.setViewportSize({ width: 360, height: 800 });
  await page.goto(`${stack.url}/#/escalations`);
  await page.getByRole('heading', { name: 'Escalations' }).waitFor();
  await screenshot(page, 'escalations-360');
});
