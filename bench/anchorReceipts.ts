// The anchor bench's receipts (bench/anchor.ts): real preflights through the gateway, each of
// which writes a decision receipt and queues its anchor leaf; every answer is kept by receipt id
// so the bench can recompute each receipt's digest from what the caller received.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { policyDocument, wireIntent } from '../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../core/validation/timestamp';

export const POLICIES = 20;
const CONCURRENCY = 16;

/** A JSON answer as the bench reads it: plain objects, fields checked where used. */
export type Answer = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Real preflights through the gateway, spread over POLICIES policies; keeps every answer by receipt id. */
export class Preflights {
  readonly answers = new Map<string, Answer>();
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private nonce = BigInt(Date.now()) * 1000n;
  private turn = 0;

  constructor(
    private readonly url: URL,
    private readonly policies: ReadonlyArray<{ policyId: string; policyHash: string }>,
  ) {}

  /** One preflight; resolves with its receipt id once answered. */
  one(): Promise<string> {
    const policy = this.policies[this.turn++ % this.policies.length];
    this.nonce += 1n;
    const body = JSON.stringify({
      policyId: policy.policyId,
      intent: wireIntent(policy, {
        agentId: 'bench-agent',
        amount: '1000',
        deadline: formatIsoSeconds(Math.floor(Date.now() / 1000) + 3600),
        nonce: this.nonce.toString(),
      }),
    });
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          agent: this.agent,
          host: this.url.hostname,
          port: this.url.port,
          path: '/preflight_payment',
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer;
            if (response.statusCode !== 200 || typeof answer.receiptId !== 'string')
              return reject(
                new Error(`preflight answered ${response.statusCode}: ${JSON.stringify(answer)}`),
              );
            this.answers.set(answer.receiptId, answer);
            resolve(answer.receiptId);
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  /** `count` preflights, CONCURRENCY at a time. */
  async many(count: number): Promise<void> {
    let left = count;
    const loop = async () => {
      while (left > 0) {
        left -= 1;
        await this.one();
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, loop));
  }

  close(): void {
    this.agent.destroy();
  }
}

export async function createPolicies(url: string, adminToken: string) {
  const policies: Array<{ policyId: string; policyHash: string }> = [];
  for (let index = 0; index < POLICIES; index += 1) {
    const policy = policyDocument({
      owner: `0x${randomBytes(20).toString('hex')}`,
      dailyBudget: '1000000.00',
      hardCap: '10.00',
      duplicates: { windowMinutes: 0, keys: ['capability'] },
      rateLimit: { callsPerHour: 1_000_000 },
    });
    const response = await fetch(`${url}/create_spend_policy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ policy }),
    });
    const body = (await response.json()) as Answer;
    if (response.status !== 201)
      throw new Error(`create_spend_policy answered ${response.status}: ${JSON.stringify(body)}`);
    policies.push({ policyId: body.policyId, policyHash: body.policyHash });
  }
  return policies;
}
