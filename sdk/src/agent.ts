// SpendControlAgent: the service as an agent calls it, over fetch (Node 20+ and browsers). Free
// calls are plain JSON; priced calls go through paidRequest (official x402 client, spend controls
// preset, payment identifiers); every POST that creates or moves something carries an
// Idempotency-Key, so a retried create, fund or execute is answered from the service's record.
// Waits poll at a fixed interval for a bounded number of rounds and never read a clock.
import type { Hex } from 'viem';
import { signInMessage, type SignInNonceFields } from '../../core/canon/sign-in-message';
import { SpendControlError, errorFromAnswer } from './errors';
import type { BuiltSpendIntent } from './intent';
import { paidRequest, type PaidAnswer, type Payer, type PaymentAsset } from './paidRequest';
import { checkReceipt, type ConsumerReceipt } from './receipt';
import type {
  ConsumerIntentView,
  CreatedPurchase,
  EscalationStatus,
  PreflightDecision,
  StoredIntent,
} from './types';

export interface SpendControlAgentOptions {
  /** The service, e.g. http://127.0.0.1:4000 (no trailing slash needed). */
  readonly baseUrl: string;
  /** Pays priced calls; without it a priced call meets its 402 as a SpendControlError. */
  readonly payer?: Payer;
  /** A session bearer (consumer or owner) for the routes that need one; signIn sets it. */
  readonly session?: string;
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch;
  /** Between two polls of a wait; default 500 ms. */
  readonly pollIntervalMs?: number;
  /** Polls before a wait gives up with WAIT_EXHAUSTED; default 1200. */
  readonly maxPolls?: number;
}

/** Who signs in: a viem LocalAccount or anything with an address and personal_sign. */
export interface SignInAccount {
  readonly address: `0x${string}`;
  signMessage(args: { message: string }): Promise<Hex>;
}

/** Signed payments kept for callers' retries (one per paymentId, oldest dropped first). */
const MAX_REMEMBERED_PAYMENTS = 256;

const FINAL_ESCALATION_STATES = new Set(['APPROVED', 'DENIED', 'EXPIRED']);
const FAILED_PURCHASE_STATES = new Set([
  'BLOCKED',
  'REFUNDED',
  'EXPIRED',
  'CANCELLED',
  'MANUAL_REVIEW',
  'FAILED_AFTER_PAYMENT',
]);

/** The JSON of an answer; its text when it is not JSON (a proxy's page, say); null when empty. */
function parsedBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function randomKey(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replace(/-/g, '')}`;
}

export class SpendControlAgent {
  readonly baseUrl: string;
  session: string | null;
  private readonly payer: Payer | null;
  private readonly fetchImpl: typeof fetch;
  private readonly pollIntervalMs: number;
  private readonly maxPolls: number;
  private serviceAsset: PaymentAsset | null = null;
  /** The payment signed under each recent paymentId, so a caller's retry presents it again. */
  private readonly signedPayments = new Map<string, string>();

  constructor(options: SpendControlAgentOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.payer = options.payer ?? null;
    this.session = options.session ?? null;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.maxPolls = options.maxPolls ?? 1200;
  }

  /** The asset and network the service takes payment in (GET /.well-known/x402), read once. */
  async paymentAsset(): Promise<PaymentAsset> {
    if (this.serviceAsset === null) {
      const discovery = await this.get<{ network: string; asset: { address: string | null } }>(
        '/.well-known/x402',
      );
      if (discovery.asset.address === null)
        throw new SpendControlError('UNEXPECTED_ANSWER', 'The service takes no payment.');
      this.serviceAsset = {
        network: discovery.network as PaymentAsset['network'],
        asset: discovery.asset.address.toLowerCase(),
      };
    }
    return this.serviceAsset;
  }

  /** Signs in with SIWE: a consumer session bound to `policyId`, or an owner session without. */
  async signIn(account: SignInAccount, options: { policyId?: string } = {}): Promise<string> {
    const nonce = await this.post<SignInNonceFields>('/consumer/auth/nonce', {});
    const message = signInMessage(account.address, nonce, options);
    const signature = await account.signMessage({ message });
    const route = options.policyId === undefined ? '/owner/auth/verify' : '/consumer/auth/verify';
    const answer = await this.post<{ accessToken: string }>(route, { message, signature });
    this.session = answer.accessToken;
    return answer.accessToken;
  }

  /** POST /create_spend_intent (free): the service's own intentHash and canonical form. */
  createSpendIntent(policyId: string, intent: BuiltSpendIntent): Promise<StoredIntent> {
    return this.post('/create_spend_intent', { policyId, intent: intent.wire });
  }

  /**
   * POST /preflight_payment, paid with x402 up to the payer's cap: the decision, its trace, the
   * reservation on APPROVED and the escalation's pollRef on ESCALATED_*. Give the same
   * `paymentId` to retry a call whose answer was lost.
   */
  async preflight(
    policyId: string,
    intent: BuiltSpendIntent,
    options: { paymentId?: string } = {},
  ): Promise<PreflightDecision & { paymentId: string }> {
    const paid = await this.paid('/preflight_payment', { policyId, intent: intent.wire }, options);
    return {
      ...(await this.answerOf<PreflightDecision>(paid.response)),
      paymentId: paid.paymentId,
    };
  }

  /** Polls GET /escalation_status/:pollRef until the owner decided or it expired. */
  async waitForEscalation(pollRef: string): Promise<EscalationStatus> {
    return this.poll(`escalation ${pollRef}`, async () => {
      const status = await this.get<EscalationStatus>(
        `/escalation_status/${encodeURIComponent(pollRef)}`,
      );
      return FINAL_ESCALATION_STATES.has(status.state) ? status : null;
    });
  }

  /**
   * A whole purchase through the consumer path with the consumer session: create (the merchant's
   * quote and the policy's decision), fund exactly the quoted amount over x402, execute, wait for
   * COMPLETED, then fetch the public receipt and check its digest.
   */
  async buy(
    capability: string,
    params: Record<string, unknown>,
    options: { idempotencyKey?: string } = {},
  ): Promise<{ intent: ConsumerIntentView; receipt: ConsumerReceipt }> {
    const created = await this.post<CreatedPurchase>(
      '/consumer/intents',
      { capability, params },
      options.idempotencyKey ?? randomKey('create'),
    );
    const request = created.fundingRequest;
    if (created.nextAction !== 'FUND' || request === null) {
      throw new SpendControlError('UNEXPECTED_ANSWER', `The intent needs ${created.nextAction}.`, {
        details: created.decision,
      });
    }
    const intentId = created.intent.intentId;
    const funded = await this.paid(
      request.path,
      {},
      { idempotencyKey: `fund_${intentId}` },
      { network: request.network as PaymentAsset['network'], asset: request.asset.toLowerCase() },
      BigInt(request.amount),
    );
    await this.answerOf(funded.response);
    await this.post(`/consumer/intents/${intentId}/execute`, {}, `execute_${intentId}`);
    const intent = await this.waitForPurchase(intentId);
    return { intent, receipt: await this.receipt(intentId) };
  }

  /** Polls GET /consumer/intents/:id until COMPLETED; a purchase that ends otherwise throws. */
  waitForPurchase(intentId: string): Promise<ConsumerIntentView> {
    return this.poll(`purchase ${intentId}`, async () => {
      const { intent } = await this.get<{ intent: ConsumerIntentView }>(
        `/consumer/intents/${encodeURIComponent(intentId)}`,
      );
      if (intent.state === 'COMPLETED') return intent;
      if (FAILED_PURCHASE_STATES.has(intent.state)) {
        throw new SpendControlError('UNEXPECTED_ANSWER', `The purchase ended ${intent.state}.`, {
          details: intent,
        });
      }
      return null;
    });
  }

  /** GET /consumer/receipt/:intentId with its digest checked against its own body. */
  async receipt(intentId: string): Promise<ConsumerReceipt> {
    return checkReceipt(
      await this.get<ConsumerReceipt>(`/consumer/receipt/${encodeURIComponent(intentId)}`),
    );
  }

  private async poll<T>(what: string, round: () => Promise<T | null>): Promise<T> {
    for (let attempt = 0; attempt < this.maxPolls; attempt += 1) {
      const done = await round();
      if (done !== null) return done;
      await new Promise((resolve) => setTimeout(resolve, this.pollIntervalMs));
    }
    throw new SpendControlError(
      'WAIT_EXHAUSTED',
      `${what}: not final after ${this.maxPolls} polls`,
      {
        retryable: true,
      },
    );
  }

  private headers(idempotencyKey?: string): Record<string, string> {
    return {
      'content-type': 'application/json',
      ...(this.session === null ? {} : { authorization: `Bearer ${this.session}` }),
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    };
  }

  private async paid(
    path: string,
    body: unknown,
    options: { paymentId?: string; idempotencyKey?: string },
    asset?: PaymentAsset,
    capAtomic?: bigint,
  ): Promise<PaidAnswer> {
    const init = {
      method: 'POST',
      headers: this.headers(options.idempotencyKey),
      body: JSON.stringify(body),
    };
    const url = `${this.baseUrl}${path}`;
    if (this.payer === null) {
      const response = await this.send(url, init);
      return { response, paymentId: '', paymentSignature: null };
    }
    const signature =
      options.paymentId === undefined ? undefined : this.signedPayments.get(options.paymentId);
    const request = {
      url,
      init,
      ...(options.paymentId !== undefined ? { paymentId: options.paymentId } : {}),
      ...(signature !== undefined ? { signature } : {}),
    };
    const target = asset ?? (await this.paymentAsset());
    const onSigned = (paymentId: string, signed: string) => this.remember(paymentId, signed);
    return paidRequest(this.fetchImpl, this.payer, target, { ...request, onSigned }, capAtomic);
  }

  /** Keeps the newest MAX_REMEMBERED_PAYMENTS signatures by paymentId. */
  private remember(paymentId: string, signature: string): void {
    this.signedPayments.delete(paymentId);
    this.signedPayments.set(paymentId, signature);
    if (this.signedPayments.size > MAX_REMEMBERED_PAYMENTS)
      this.signedPayments.delete(this.signedPayments.keys().next().value!);
  }

  private async get<T>(path: string): Promise<T> {
    return this.answerOf<T>(await this.send(`${this.baseUrl}${path}`, { headers: this.headers() }));
  }

  private async post<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    const init = {
      method: 'POST',
      headers: this.headers(idempotencyKey),
      body: JSON.stringify(body),
    };
    return this.answerOf<T>(await this.send(`${this.baseUrl}${path}`, init));
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchImpl(url, init);
    } catch (error) {
      throw new SpendControlError(
        'NETWORK_ERROR',
        `No answer from ${url}: ${(error as Error).message}`,
        {
          retryable: true,
        },
      );
    }
  }

  private async answerOf<T>(response: Response): Promise<T> {
    const text = await response.text();
    const body = parsedBody(text);
    if (response.status >= 200 && response.status < 300) return body as T;
    throw errorFromAnswer(response.status, body);
  }
}
