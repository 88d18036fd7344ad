// Escalation test support: a policy whose threshold escalates 1.5 USDT0, intents against it, and a
// websocket subscriber that records every escalationUpdated message and waits for one by content
// (never by time alone).
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { postJson, type TestStack } from './stack';

export interface TestPolicy {
  policyId: string;
  policyHash: string;
}

export async function createEscalatingPolicy(
  stack: TestStack,
  owner: string,
  overrides: Record<string, unknown> = {},
): Promise<TestPolicy> {
  const created = await postJson(
    stack.url,
    '/create_spend_policy',
    { policy: policyDocument({ owner, ...overrides }) },
    stack.adminToken,
  );
  if (created.status !== 201) throw new Error(`policy refused: ${JSON.stringify(created.body)}`);
  return { policyId: created.body.policyId, policyHash: created.body.policyHash };
}

/** An intent over the 1.00 threshold by default (1.5 USDT0), deadline one hour after `nowMs`. */
export function escalatingIntent(
  policy: TestPolicy,
  nowMs: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return freshWireIntent(
    policy,
    nowMs,
    { amount: '1500000', endpoint: 'https://api.vendor.example/ticks', ...overrides },
    {
      description: 'EURUSD tick history, 30 days',
      params: {},
    },
  );
}

export async function preflight(
  stack: TestStack,
  policy: TestPolicy,
  intent: Record<string, unknown>,
): Promise<any> {
  const result = await postJson(stack.url, '/preflight_payment', {
    policyId: policy.policyId,
    intent,
  });
  if (result.status !== 200)
    throw new Error(`preflight answered ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body;
}

export async function pollStatus(
  stack: TestStack,
  pollRef: string,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}/escalation_status/${pollRef}`);
  return { status: response.status, body: await response.json() };
}

export interface EscalationMessage {
  pollRef: string;
  state: string;
  outcome: string | null;
  policyId: string;
  resolvedVia: string | null;
}

export interface EscalationSubscriber {
  readonly messages: EscalationMessage[];
  readonly errors: unknown[];
  /** The close code once the socket closes (4403 when the server ends the session). */
  readonly closed: Promise<number>;
  waitFor(match: (message: EscalationMessage) => boolean): Promise<EscalationMessage>;
  close(): Promise<void>;
}

/** Opens a websocket as `token` (none: anonymous) and subscribes to escalationUpdated. */
export function subscribeToEscalations(
  stack: TestStack,
  token: string | null,
  /** `fields`: the EscalationUpdate fields to select (default: those of EscalationMessage). */
  args: { pollRef?: string; fields?: string } = {},
): EscalationSubscriber {
  const client: Client = createClient({
    url: stack.wsUrl,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: token === null ? {} : { authorization: `Bearer ${token}` },
    // A close (the session ended, say) is reported through `closed` and `errors`, not printed.
    onNonLazyError: () => undefined,
  });
  const messages: EscalationMessage[] = [];
  const errors: unknown[] = [];
  const closed = new Promise<number>((resolve) =>
    client.on('closed', (event) => resolve((event as { code?: number }).code ?? 0)),
  );
  const waiters: Array<{
    match: (message: EscalationMessage) => boolean;
    resolve: (message: EscalationMessage) => void;
    reject: (error: unknown) => void;
  }> = [];
  const dispose = client.subscribe<{ escalationUpdated: EscalationMessage }>(
    {
      query: `subscription ($pollRef: ID) { escalationUpdated(pollRef: $pollRef) { ${args.fields ?? 'pollRef state outcome policyId resolvedVia'} } }`,
      variables: { pollRef: args.pollRef ?? null },
    },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        const message = result.data?.escalationUpdated;
        if (!message) return;
        messages.push(message);
        for (const waiter of [...waiters]) {
          if (waiter.match(message)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(message);
          }
        }
      },
      error: (error) => {
        errors.push(error);
        for (const waiter of waiters.splice(0)) waiter.reject(error);
      },
      complete: () => undefined,
    },
  );
  return {
    messages,
    errors,
    closed,
    waitFor(match) {
      const seen = messages.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => waiters.push({ match, resolve, reject }));
    },
    async close() {
      dispose();
      await client.dispose();
    },
  };
}

/** Resolves once `count` subscribers listen on the gateway's escalation topic. */
export async function waitForEscalationSubscribers(stack: TestStack, count: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (stack.stack.gateway.fanout.listenerCount('escalationUpdated') < count) {
    if (Date.now() > deadline) throw new Error('escalation subscription never became live');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
