// Runs one cell of the authorization matrix (an operation as one actor) on the real stack and
// names what came back in the matrix's classes: A / ok by whether the answer holds policy A's
// data the caller did not send, 401 / 403 / 404 / 402 for refusals, anything else spelled out.
// A refusal that still carries A's data is reported as a leak, whatever its class.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
  /** The error code of a refusal (REST body, MCP structuredContent), to compare transports. */
  readonly code?: string;
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
  const code = (JSON.parse(text) as { code?: string }).code;
  if (status === 401 || status === 403 || status === 404)
    return { observed: String(status), text, code };
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

/** A tool call over POST /mcp with the SDK's own client; a refusal is isError with the error body. */
async function runMcp(
  world: MatrixWorld,
  token: string | null,
  invocation: Extract<Invocation, { kind: 'mcp' }>,
): Promise<Answer> {
  const client = new Client({ name: 'attack-matrix', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${world.stack.url}/mcp`), {
      requestInit: { headers: token === null ? {} : { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const result = await client.callTool({
      name: invocation.tool,
      arguments: invocation.arguments,
    });
    const text = JSON.stringify(result);
    const content = result.structuredContent as Record<string, unknown> | undefined;
    if (!result.isError) return { observed: 'allowed', text };
    if (content && 'x402Version' in content && 'accepts' in content)
      return { observed: '402', text };
    return { observed: classOfCode(content?.code), text, code: String(content?.code) };
  } finally {
    await client.close();
  }
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

async function answerOf(world: MatrixWorld, token: string | null, invocation: Invocation) {
  if (invocation.kind === 'rest') return runRest(world, token, invocation);
  if (invocation.kind === 'mcp') return runMcp(world, token, invocation);
  if (invocation.kind === 'graphql') return runGraphQL(world, token, invocation);
  return runSubscription(world, token, invocation);
}

/** One cell's class and, for a refusal, its error code (REST and MCP). */
export async function runCellWithCode(
  world: MatrixWorld,
  invocation: Invocation,
  actor: ActorName,
  expected: Expected,
): Promise<{ readonly observed: string; readonly code?: string }> {
  const answer = await answerOf(world, world.tokens[actor], invocation);
  const leaked = leakedMarkers(world, invocation, answer.text);
  if (answer.observed === 'allowed') return { observed: leaked.length > 0 ? 'A' : 'ok' };
  if (leaked.length > 0) return { observed: `${answer.observed}, leaking ${leaked.join(', ')}` };
  // A priced operation on GraphQL has no challenge to answer: any refusal without data keeps it unpaid.
  const refused =
    ['401', '403', '404'].includes(answer.observed) || answer.observed.startsWith('refused ');
  const challengeless = invocation.kind === 'graphql' || invocation.kind === 'subscription';
  if (expected === '402' && challengeless && refused) return { observed: '402' };
  return { observed: answer.observed, code: answer.code };
}

/** The observed class of one cell, comparable with the matrix's expected class. */
export async function runCell(
  world: MatrixWorld,
  invocation: Invocation,
  actor: ActorName,
  expected: Expected,
): Promise<string> {
  return (await runCellWithCode(world, invocation, actor, expected)).observed;
}
