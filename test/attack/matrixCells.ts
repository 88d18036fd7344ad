// Runs one cell of the authorization matrix (an operation as one actor) on the real stack and
// names what came back in the matrix's classes: A / ok by whether the answer holds policy A's
// data the caller did not send, 401 / 403 / 404 / 402 for refusals, anything else spelled out.
// A refusal that still carries A's data is reported as a leak, whatever its class.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { ERROR_CODES, isErrorCode } from '../../core/errors';
import type { ActorName, Expected } from './authorization-matrix';
import type { MatrixWorld } from './matrixWorld';
import type { Invocation } from './operations';

interface Answer {
  /** The class, or what the answer was when it fits none. */
  readonly observed: string;
  /** Everything the caller received. */
  readonly text: string;
}

const SUBSCRIPTION_WAIT_MS = 15_000;

function classOfCode(code: unknown): string {
  if (!isErrorCode(code)) return `refused ${String(code)}`;
  const status = ERROR_CODES[code].status;
  return status === 401 || status === 403 || status === 404 ? String(status) : `refused ${code}`;
}

async function runRest(
  world: MatrixWorld,
  token: string | null,
  invocation: Extract<Invocation, { kind: 'rest' }>,
): Promise<Answer> {
  const response = await fetch(`${world.stack.url}${invocation.path}`, {
    method: invocation.method,
    headers: {
      ...(invocation.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: invocation.body === undefined ? undefined : JSON.stringify(invocation.body),
  });
  const text = await response.text();
  const { status } = response;
  if (status >= 200 && status < 300) return { observed: 'allowed', text };
  if (status === 402)
    return {
      observed: response.headers.get('payment-required') ? '402' : '402 without a challenge',
      text,
    };
  if (status === 401 || status === 403 || status === 404) return { observed: String(status), text };
  return { observed: `${status} ${(JSON.parse(text) as { code?: string }).code ?? ''}`, text };
}

async function runGraphQL(
  world: MatrixWorld,
  token: string | null,
  invocation: Extract<Invocation, { kind: 'graphql' }>,
): Promise<Answer> {
  const response = await fetch(`${world.stack.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query: invocation.query, variables: invocation.variables ?? {} }),
  });
  const text = await response.text();
  const body = JSON.parse(text) as {
    data?: Record<string, unknown> | null;
    errors?: Array<{ extensions?: { code?: unknown } }>;
  };
  const value = body.data?.[invocation.field];
  if (value === null || value === undefined) {
    return {
      observed:
        body.errors && body.errors.length > 0
          ? classOfCode(body.errors[0].extensions?.code)
          : '404',
      text,
    };
  }
  return { observed: 'allowed', text };
}

function classOfSubscriptionError(error: unknown): string {
  if (Array.isArray(error))
    return classOfCode((error[0] as { extensions?: { code?: unknown } })?.extensions?.code);
  const closed = error as { code?: number; reason?: string };
  if (typeof closed?.code === 'number')
    return `socket closed ${closed.code} ${closed.reason ?? ''}`.trim();
  return `failed ${String((error as Error)?.message ?? error)}`;
}

/** Waits until the gateway has `count` listeners on the topic: more (subscribed) or back down (cleaned up). */
async function waitForListeners(
  world: MatrixWorld,
  topic: string,
  reached: (count: number) => boolean,
  what: string,
): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!reached(world.stack.stack.gateway.fanout.listenerCount(topic))) {
    if (Date.now() > deadline) throw new Error(`the ${topic} subscription ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function runSubscription(
  world: MatrixWorld,
  token: string | null,
  invocation: Extract<Invocation, { kind: 'subscription' }>,
): Promise<Answer> {
  const client = createClient({
    url: world.stack.wsUrl,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  const received: unknown[] = [];
  const topic = invocation.listenTopic ?? invocation.topic;
  const listening = world.stack.stack.gateway.fanout.listenerCount(topic);
  try {
    const observed = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('no answer'), SUBSCRIPTION_WAIT_MS);
      const done = (result: string) => {
        clearTimeout(timer);
        resolve(result);
      };
      client.subscribe<Record<string, Record<string, unknown>>>(
        { query: invocation.query },
        {
          next: (result) => {
            received.push(result);
            if (result.errors && result.errors.length > 0)
              done(classOfCode(result.errors[0].extensions?.code));
            const message = result.data?.[invocation.topic];
            if (message && invocation.until(message)) done('allowed');
          },
          error: (error) => {
            received.push(error);
            done(classOfSubscriptionError(error));
          },
          complete: () => done('completed without the awaited message'),
        },
      );
      if (invocation.trigger) {
        waitForListeners(world, topic, (count) => count > listening, 'never became live')
          .then(invocation.trigger)
          .catch((error: Error) => done(`trigger failed: ${error.message}`));
      }
    });
    return { observed, text: JSON.stringify(received) };
  } finally {
    await client.dispose();
    // The next cell counts listeners from here: this one's must be gone first.
    await waitForListeners(world, topic, (count) => count <= listening, 'outlived its socket');
  }
}

/** Strings of policy A in the answer that the request did not carry. */
function leakedMarkers(world: MatrixWorld, invocation: Invocation, text: string): string[] {
  // Addresses and hashes travel in either case (a signed message holds the checksummed address).
  const sent = JSON.stringify(invocation).toLowerCase();
  const received = text.toLowerCase();
  return world.markersOfA.filter(
    (marker) => !sent.includes(marker.toLowerCase()) && received.includes(marker.toLowerCase()),
  );
}

/** The observed class of one cell, comparable with the matrix's expected class. */
export async function runCell(
  world: MatrixWorld,
  invocation: Invocation,
  actor: ActorName,
  expected: Expected,
): Promise<string> {
  const token = world.tokens[actor];
  const answer =
    invocation.kind === 'rest'
      ? await runRest(world, token, invocation)
      : invocation.kind === 'graphql'
        ? await runGraphQL(world, token, invocation)
        : await runSubscription(world, token, invocation);
  const leaked = leakedMarkers(world, invocation, answer.text);
  if (answer.observed === 'allowed') return leaked.length > 0 ? 'A' : 'ok';
  if (leaked.length > 0) return `${answer.observed}, leaking ${leaked.join(', ')}`;
  // A priced operation on GraphQL has no challenge to answer: any refusal without data keeps it unpaid.
  const refused =
    ['401', '403', '404'].includes(answer.observed) || answer.observed.startsWith('refused ');
  if (expected === '402' && invocation.kind !== 'rest' && refused) return '402';
  return answer.observed;
}
