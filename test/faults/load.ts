// The load a fault test runs while it breaks something: a few agents, each with its own wallet,
// policy, consumer and owner sessions, a bound webhook channel and an owner webhook endpoint for
// its events, looping over free calls, paid calls (x402 on the funding chain), preflights that
// are approved, preflights that escalate to the owner, and whole purchases (create → fund over x402 → execute). Every answer is recorded
// with the phase it arrived in. A client behaves as a well-written agent does: a retryable refusal
// (5xx with a registered retryable code, 429) is retried after a pause with the same request, and
// a paid request keeps presenting the same payment until it is answered or refused with a 402
// (then it was not charged and the next iteration signs afresh).
import { ERROR_CODES, isErrorCode } from '../../core/errors';
import { freshWireIntent } from '../../core/test-support/spend-fixtures';
import { signWebhookBody } from '../../channels/webhook';
import { challengeOf, signedPaymentHeader } from '../../devnet/agents/x402Payer';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { graphql } from '../support/stack';
import type { FaultWorld } from './world';

export type Operation = 'free' | 'paid' | 'preflight' | 'escalation' | 'purchase';
export const OPERATIONS: readonly Operation[] = [
  'free',
  'paid',
  'preflight',
  'escalation',
  'purchase',
];
export type Phase = 'before' | 'fault' | 'after';

export interface Answer {
  readonly op: Operation;
  readonly step: string;
  readonly phase: Phase;
  readonly status: number;
  readonly code: string | null;
  /** The Retry-After header, when the answer carried one. */
  readonly retryAfter: string | null;
  /** Whether the request presented a payment (a 402 then refused it). */
  readonly paymentPresented: boolean;
  /** The x402 refusal reason of a 402 (the challenge's `error`), if any. */
  readonly refusal: string | null;
  /** The payment refused had been parked (503 PAYMENT_SETTLEMENT_PENDING) before: the chain decided it unpaid. */
  readonly afterParked: boolean;
}

/** A payment answered 2xx: who paid, how much, for which operation. */
export interface PaidAnswer {
  readonly payer: string;
  readonly op: Operation;
  readonly amount: bigint;
}

export interface Agent extends TestConsumer {
  readonly receiverPath: string;
}

export interface LoadRun {
  readonly answers: Answer[];
  readonly paid: PaidAnswer[];
  /** Purchases whose execute was accepted (202), by intent id. */
  readonly purchases: string[];
  /** Operations that finished (every step answered 2xx), by op and phase. */
  readonly completed: Array<{ op: Operation; phase: Phase }>;
  /** Errors thrown by the clients themselves (unexpected shapes, a wrong answer). */
  readonly clientErrors: string[];
  /** Marks the fault window (answers in between are 'fault'). */
  faultStarted(): void;
  faultEnded(): void;
  /** Stops every client after its current operation. */
  stop(): Promise<void>;
}

const PAUSE_MS = 150;
// A parked payment is decided by the chain at the latest once its authorization expires (the
// agent signs for five minutes): a client keeps presenting it that long.
const OPERATION_DEADLINE_MS = 330_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const START_LINK = `mutation ($kind: ChannelKind!, $address: String) {
  startChannelLink(kind: $kind, address: $address) { linkCode secret }
}`;

const CREATE_ENDPOINT = `mutation ($input: WebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) { endpoint { id } }
}`;

/** An agent with funds, a policy allowing domains and market data, and its webhook channel bound. */
export async function newAgent(world: FaultWorld, index: number): Promise<Agent> {
  const agent = await newConsumer(world.stack, world.devnet, {
    mintAtomic: 100_000_000n,
    policy: {
      categories: { allow: ['domains', 'market-data'], deny: [] },
      rateLimit: { callsPerHour: 10_000 },
      dailyBudget: '1000.00',
      hardCap: '1000.00',
      escalation: { timeoutMinutes: 30, channels: ['webhook'] },
    },
  });
  const receiverPath = `/hooks/agent-${index}`;
  const started = await graphql(
    world.stack.url,
    START_LINK,
    { kind: 'WEBHOOK', address: `${world.receiver.url}${receiverPath}` },
    agent.owner,
  );
  if (started.body.errors) throw new Error(JSON.stringify(started.body.errors));
  const { linkCode, secret } = started.body.data.startChannelLink;
  const body = JSON.stringify({ type: 'channel.link', code: linkCode });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const linked = await fetch(`${world.stack.url}/channels/webhook/reply`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-spend-control-timestamp': timestamp,
      'x-spend-control-signature': signWebhookBody(secret, timestamp, body),
    },
    body,
  });
  if (linked.status !== 200) throw new Error(`webhook link answered ${linked.status}`);
  // The owner's outbound events go to the same receiver, on a path of their own.
  const endpoint = await graphql(
    world.stack.url,
    CREATE_ENDPOINT,
    {
      input: {
        url: `${world.receiver.url}/events/agent-${index}`,
        events: ['escalation.created', 'consumer_intent.state_changed'],
      },
    },
    agent.owner,
  );
  if (endpoint.body.errors) throw new Error(JSON.stringify(endpoint.body.errors));
  return { ...agent, receiverPath };
}

/** Is this answer one a client may retry: a registered retryable code with a 5xx, 429 or 409 status. */
export function isRetryable(status: number, code: string | null): boolean {
  if (code === null || !isErrorCode(code)) return false;
  const spec = ERROR_CODES[code];
  return (
    spec.retryable && spec.status === status && (status >= 500 || status === 429 || status === 409)
  );
}

async function codeOf(response: Response): Promise<{ code: string | null; body: any }> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as any;
    return { code: typeof body?.code === 'string' ? body.code : null, body };
  } catch {
    return { code: null, body: text };
  }
}

class Client {
  constructor(
    private readonly world: FaultWorld,
    private readonly agent: Agent,
    private readonly run: LoadState,
  ) {}

  private readonly parked = new Set<string>();

  private async send(
    op: Operation,
    step: string,
    path: string,
    init: { method: string; token?: string; body?: unknown; payment?: string },
  ): Promise<{ status: number; code: string | null; body: any; response: Response }> {
    const response = await fetch(`${this.world.stack.url}${path}`, {
      method: init.method,
      headers: {
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.payment ? { 'payment-signature': init.payment } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const { code, body } = await codeOf(response);
    this.run.answers.push({
      op,
      step,
      phase: this.run.phase,
      status: response.status,
      code,
      retryAfter: response.headers.get('retry-after'),
      paymentPresented: init.payment !== undefined,
      refusal:
        response.status === 402 && init.payment !== undefined
          ? String(challengeOf(response).error ?? null)
          : null,
      afterParked: init.payment !== undefined && this.parked.has(init.payment),
    });
    if (init.payment !== undefined && code === 'PAYMENT_SETTLEMENT_PENDING')
      this.parked.add(init.payment);
    return { status: response.status, code, body, response };
  }

  /** Sends until a 2xx (returned) or a final refusal (null); retryable refusals are retried as sent. */
  private async untilAnswered(
    op: Operation,
    step: string,
    path: string,
    init: { method: string; token?: string; body?: unknown },
    paid: boolean,
  ): Promise<any | null> {
    const deadline = Date.now() + OPERATION_DEADLINE_MS;
    let payment: { header: string; amount: bigint } | undefined;
    const presented: Array<{ header: string; amount: bigint }> = [];
    while (Date.now() < deadline) {
      const answer = await this.send(op, step, path, { ...init, payment: payment?.header });
      if (answer.status >= 200 && answer.status < 300) {
        if (payment !== undefined) {
          if (answer.response.headers.get('payment-response') === null)
            this.run.clientErrors.push(`${op}/${step}: paid 2xx without PAYMENT-RESPONSE`);
          this.run.paid.push({ payer: this.agent.account.address, op, amount: payment.amount });
        }
        return answer.body;
      }
      if (answer.status === 402 && paid) {
        // Unpaid (or a payment refused uncharged): sign a fresh authorization for this challenge.
        const required = challengeOf(answer.response);
        const header = await signedPaymentHeader(required, this.agent.account);
        payment = { header, amount: BigInt(required.accepts[0]!.amount) };
        presented.push(payment);
        continue;
      }
      if (presented.length >= 2 && fundedByParkedPayment(answer)) {
        // An earlier authorization of ours for this intent is parked (its answer was lost in the
        // fault) and the fresh one was refused uncharged: present the earlier one again until the
        // chain decides it, as docs/x402.md ("Lost answer") tells a client to.
        presented.pop();
        payment = presented[presented.length - 1];
        await sleep(PAUSE_MS);
        continue;
      }
      if (!isRetryable(answer.status, answer.code)) {
        this.run.clientErrors.push(
          `${op}/${step} (${this.run.phase}): ${answer.status} ${JSON.stringify(answer.body)}`,
        );
        return null;
      }
      await sleep(PAUSE_MS);
    }
    this.run.clientErrors.push(`${op}/${step}: not answered within ${OPERATION_DEADLINE_MS} ms`);
    return null;
  }

  /**
   * A create whose answer was lost mid-way (the database went away after the intent was stored)
   * is answered again by its idempotency key with the intent as it stands; one left in
   * POLICY_CHECKING is decided by the worker once it is stale. Waits for AWAITING_FUNDING.
   */
  private async untilFundable(base: string): Promise<boolean> {
    const deadline = Date.now() + OPERATION_DEADLINE_MS;
    while (Date.now() < deadline) {
      const read = await this.untilAnswered(
        'purchase',
        'read',
        base,
        { method: 'GET', token: this.agent.session },
        false,
      );
      if (read === null) return false;
      const state = (read.intent ?? read).state as string;
      if (state === 'AWAITING_FUNDING') return true;
      if (!['CREATED', 'QUOTED', 'POLICY_CHECKING', 'APPROVED'].includes(state)) {
        this.run.clientErrors.push(`purchase ${base} ended ${state} before funding`);
        return false;
      }
      await sleep(500);
    }
    this.run.clientErrors.push(`purchase ${base} never became fundable`);
    return false;
  }

  private preflightBody(amount: string) {
    const intent = freshWireIntent(this.agent.policy, Date.now(), {
      amount,
      network: this.world.rails.funding.network,
      token: this.world.rails.funding.token.toLowerCase(),
      endpoint: 'https://api.vendor.example/ticks',
    });
    return { policyId: this.agent.policy.policyId, intent };
  }

  async operate(op: Operation): Promise<boolean> {
    const { session } = this.agent;
    switch (op) {
      case 'free':
        return (
          (await this.untilAnswered(
            op,
            'policy',
            '/consumer/policy',
            { method: 'GET', token: session },
            false,
          )) !== null
        );
      case 'paid':
        return (
          (await this.untilAnswered(op, 'ping', '/ping_service', { method: 'GET' }, true)) !== null
        );
      case 'preflight':
      case 'escalation': {
        const body = this.preflightBody(op === 'preflight' ? '200000' : '1500000');
        const decided = await this.untilAnswered(
          op,
          'preflight',
          '/preflight_payment',
          { method: 'POST', body },
          true,
        );
        return decided !== null;
      }
      case 'purchase':
        return this.purchase();
    }
  }

  private async purchase(): Promise<boolean> {
    const { session } = this.agent;
    const domain = `fault-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}.test`;
    const created = await this.untilAnswered(
      'purchase',
      'create',
      '/consumer/intents',
      {
        method: 'POST',
        token: session,
        body: { capability: 'domains.check', params: { domain }, idempotencyKey: `key-${domain}` },
      },
      false,
    );
    if (created === null) return false;
    const intentId = created.intent.intentId as string;
    const base = `/consumer/intents/${intentId}`;
    if (created.intent.state !== 'AWAITING_FUNDING' && !(await this.untilFundable(base)))
      return false;
    const funded = await this.untilAnswered(
      'purchase',
      'fund',
      `${base}/fund`,
      { method: 'POST', token: session },
      true,
    );
    if (funded === null) return false;
    const executed = await this.untilAnswered(
      'purchase',
      'execute',
      `${base}/execute`,
      { method: 'POST', token: session, body: {} },
      false,
    );
    if (executed === null) return false;
    this.run.purchases.push(intentId);
    return true;
  }
}

interface LoadState {
  phase: Phase;
  readonly answers: Answer[];
  readonly paid: PaidAnswer[];
  readonly purchases: string[];
  readonly clientErrors: string[];
}

/** Starts one client per agent, each cycling through every operation from a different start. */
export function startLoad(world: FaultWorld, agents: readonly Agent[]): LoadRun {
  const state: LoadState = {
    phase: 'before',
    answers: [],
    paid: [],
    purchases: [],
    clientErrors: [],
  };
  const completed: LoadRun['completed'] = [];
  let stopping = false;
  const loops = agents.map(async (agent, index) => {
    const client = new Client(world, agent, state);
    for (let turn = index; !stopping; turn += 1) {
      const op = OPERATIONS[turn % OPERATIONS.length]!;
      const phase = state.phase;
      try {
        if (await client.operate(op)) completed.push({ op, phase });
      } catch (error) {
        state.clientErrors.push(`${op}: ${(error as Error).message}`);
        await sleep(PAUSE_MS);
      }
    }
  });
  return {
    ...state,
    answers: state.answers,
    completed,
    faultStarted() {
      state.phase = 'fault';
    },
    faultEnded() {
      state.phase = 'after';
    },
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** 409 INTENT_NOT_FUNDABLE because another payment for the intent is parked or settling. */
function fundedByParkedPayment(answer: {
  status: number;
  code: string | null;
  body: any;
}): boolean {
  const state = answer.body?.details?.paymentState;
  return (
    answer.status === 409 &&
    answer.code === 'INTENT_NOT_FUNDABLE' &&
    (state === 'PENDING' || state === 'SETTLING')
  );
}

/** Payments refused with a 402 (uncharged, but not retryable as presented): no fault may cause one. */
export function refusedPayments(run: LoadRun): Answer[] {
  return run.answers.filter((answer) => answer.status === 402 && answer.paymentPresented);
}

/** Answers that no fault may produce: a 5xx without a registered retryable code. */
export function unretryableServerErrors(run: LoadRun): Answer[] {
  return run.answers.filter(
    (answer) => answer.status >= 500 && !isRetryable(answer.status, answer.code),
  );
}
