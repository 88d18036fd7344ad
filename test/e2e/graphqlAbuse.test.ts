// Issue 15, the GraphQL abuse cases of items 7, 8 and 11 (and item 3's two GraphQL inputs), each
// sent to POST /graphql as an attacker would: every one is refused with a 4xx, the documented
// error and a code, nothing is written, and /healthz keeps answering within 100 ms throughout.
// Priced fields (item 1) are in graphqlPaidRoutes.test.ts; subscriptions (9, 10) in graphqlSubscriptionsAbuse.test.ts.
import { getIntrospectionQuery } from 'graphql';
import { NOW_MS, freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { GRAPHQL_LIMIT_DEFAULTS } from '../../platform/config';
import { startTestStack, postJson, type TestStack } from '../support/stack';

const HEALTHZ_WITHIN_MS = 100;

interface GraphQLAnswer {
  status: number;
  body: {
    data?: unknown;
    errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
  };
}

let stack: TestStack;
let quiet: TestStack;

async function post(target: TestStack, request: Record<string, unknown>): Promise<GraphQLAnswer> {
  const response = await fetch(`${target.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  return { status: response.status, body: (await response.json()) as GraphQLAnswer['body'] };
}

/** Sends the request three times while /healthz is asked back to back; the slowest health answer in ms. */
async function slowestHealthzDuring(
  request: Record<string, unknown>,
  target: TestStack,
  answers: GraphQLAnswer[],
): Promise<number> {
  let attacking = true;
  const healthzMs: number[] = [];
  const probe = (async () => {
    while (attacking || healthzMs.length < 3) {
      const started = performance.now();
      const response = await fetch(`${target.url}/healthz`);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      healthzMs.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  try {
    for (let round = 0; round < 3; round += 1) answers.push(await post(target, request));
  } finally {
    attacking = false;
    await probe;
  }
  return Math.max(...healthzMs);
}

/**
 * Sends the request once unwatched (so its code paths are compiled), then watched: every health
 * answer must come within HEALTHZ_WITHIN_MS. A watched run slowed by a busy machine is repeated
 * once; an attack that blocks the process is slow every time. Returns every answer to the attack.
 */
async function attackWhileProbing(
  request: Record<string, unknown>,
  target: TestStack = stack,
): Promise<GraphQLAnswer[]> {
  const answers = [await post(target, request)];
  await (await fetch(`${target.url}/healthz`)).arrayBuffer();
  let slowestMs = await slowestHealthzDuring(request, target, answers);
  if (slowestMs >= HEALTHZ_WITHIN_MS)
    slowestMs = await slowestHealthzDuring(request, target, answers);
  expect(slowestMs).toBeLessThan(HEALTHZ_WITHIN_MS);
  return answers;
}

/** Every answer: the given 4xx, no data, one error with the code, its status and retryable:false. */
function expectRefused(
  answers: GraphQLAnswer[],
  status: number,
  code: string,
  details?: Record<string, unknown>,
): void {
  for (const answer of answers) {
    expect(answer.status).toBe(status);
    expect(answer.body.data ?? null).toBeNull();
    expect(answer.body.errors).toHaveLength(1);
    const [error] = answer.body.errors!;
    expect(error.message).toEqual(expect.any(String));
    expect(error.extensions).toMatchObject({ code, status, retryable: false });
    if (details) expect(error.extensions?.details).toMatchObject(details);
  }
}

/** `fragment F0 on <type> { ...F1 ...F1 }` … down to `fragment F<levels> on <type> { <leaf> }`. */
function doublingFragments(levels: number, type: string, leaf: string): string {
  let source = `fragment F${levels} on ${type} { ${leaf} }`;
  for (let level = levels - 1; level >= 0; level -= 1)
    source += ` fragment F${level} on ${type} { ...F${level + 1} ...F${level + 1} }`;
  return source;
}

async function nonceRows(): Promise<number> {
  return Number(
    (await stack.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM policy.sign_in_nonces'))
      .rows[0].n,
  );
}

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(NOW_MS) });
  quiet = await startTestStack({ introspection: false });
});

afterAll(async () => {
  await stack?.stop();
  await quiet?.stop();
});

describe('item 7: documents that multiply work', () => {
  it('refuses the 904-byte doubling-fragment query ending in __typename, with the process still answering', async () => {
    const query = `query { ...F0 } ${doublingFragments(22, 'Query', '__typename')}`;
    expect(query).toHaveLength(904);
    expectRefused(await attackWhileProbing({ query }), 400, 'GRAPHQL_QUERY_TOO_LARGE', {
      limit: 'rootFields',
      actual: 2 ** 22,
    });
  });

  it('counts __typename below the root too: doubling fragments inside a field exceed the field limit', async () => {
    const query = `{ catalog { ...F0 } } ${doublingFragments(24, 'Catalog', '__typename')}`;
    expectRefused(await attackWhileProbing({ query }), 400, 'GRAPHQL_QUERY_TOO_LARGE', {
      limit: 'fields',
      actual: 1 + 2 ** 24,
    });
  });

  it('refuses a document over the token limit before graphql-js parses or validates it', async () => {
    const query = `{ ${'__typename '.repeat(GRAPHQL_LIMIT_DEFAULTS.maxTokens)} }`;
    expectRefused(await attackWhileProbing({ query }), 400, 'GRAPHQL_QUERY_TOO_LARGE', {
      limit: 'tokens',
      max: GRAPHQL_LIMIT_DEFAULTS.maxTokens,
    });
  });

  it('keeps graphql-js validation bounded: the same field repeated as often as the token limit allows', async () => {
    // Field merging compares repeated fields pairwise; the token limit is what bounds their number.
    const copies = Math.floor((GRAPHQL_LIMIT_DEFAULTS.maxTokens - 2) / 4);
    const query = `{ ${'catalog { maturityOrder } '.repeat(copies)}}`;
    expectRefused(await attackWhileProbing({ query }), 400, 'GRAPHQL_QUERY_TOO_LARGE', {
      limit: 'rootFields',
      actual: copies,
    });
  });

  it('refuses more aliases than the limit, even on a free field', async () => {
    const aliases = Array.from(
      { length: GRAPHQL_LIMIT_DEFAULTS.maxAliases + 1 },
      (_, index) => `a${index}: maturityOrder`,
    ).join(' ');
    expectRefused(
      await attackWhileProbing({ query: `{ catalog { ${aliases} } }` }),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      { limit: 'aliases' },
    );
  });
});

describe('item 8: aliases that repeat work and mutations', () => {
  it('refuses 1,500 aliased issueSignInNonce from an anonymous caller and writes no nonce', async () => {
    const before = await nonceRows();
    const query = `mutation { ${Array.from({ length: 1500 }, (_, index) => `n${index}: issueSignInNonce { nonce }`).join(' ')} }`;
    expectRefused(await attackWhileProbing({ query }), 400, 'GRAPHQL_QUERY_TOO_LARGE', {
      limit: 'tokens',
    });
    expect(await nonceRows()).toBe(before);
  });

  it('runs one mutation field per request: two are refused before either runs', async () => {
    const before = await nonceRows();
    const query =
      'mutation { first: issueSignInNonce { nonce } second: issueSignInNonce { nonce } }';
    expectRefused(await attackWhileProbing({ query }), 400, 'GRAPHQL_QUERY_TOO_LARGE', {
      limit: 'mutations',
      max: 1,
      actual: 2,
    });
    expect(await nonceRows()).toBe(before);
    const one = await post(stack, { query: 'mutation { issueSignInNonce { nonce } }' });
    expect(one.status).toBe(200);
    expect(await nonceRows()).toBe(before + 1);
  });

  it.each([
    [1000, 'tokens'],
    [50, 'mutations'],
  ])(
    'refuses %i aliased preflightPayment (the %s limit) and decides nothing',
    async (count, limit) => {
      const created = await postJson(
        stack.url,
        '/create_spend_policy',
        { policy: policyDocument({ owner: `0x${'12'.repeat(20)}` }) },
        stack.adminToken,
      );
      const intent = freshWireIntent(
        { policyId: created.body.policyId, policyHash: created.body.policyHash },
        NOW_MS,
      );
      const fields = Array.from(
        { length: count },
        (_, index) => `p${index}: preflightPayment(policyId: $p, intent: $i)`,
      ).join(' ');
      const answers = await attackWhileProbing({
        query: `mutation ($p: ID, $i: JSONObject) { ${fields} }`,
        variables: { p: created.body.policyId, i: intent },
      });
      expectRefused(answers, 400, 'GRAPHQL_QUERY_TOO_LARGE', { limit });
      const decided = await stack.db.pool.query(
        'SELECT 1 FROM intent.decisions WHERE policy_id = $1',
        [created.body.policyId],
      );
      expect(decided.rowCount).toBe(0);
    },
  );

  it('caps root fields per query operation', async () => {
    const roots = Array.from(
      { length: GRAPHQL_LIMIT_DEFAULTS.maxRootFields + 1 },
      () => 'catalog { maturityOrder }',
    );
    const query = `{ ${roots.map((root, index) => `c${index}: ${root}`).join(' ')} }`;
    expectRefused(await attackWhileProbing({ query }), 400, 'GRAPHQL_QUERY_TOO_LARGE', {
      limit: 'rootFields',
    });
  });
});

describe('item 3: GraphQL requests that cannot run as sent', () => {
  it('answers a mismatched operationName with 400 GRAPHQL_OPERATION_NOT_FOUND', async () => {
    const answers = await attackWhileProbing({
      query: 'query Catalog { catalog { maturityOrder } }',
      operationName: 'Other',
    });
    expectRefused(answers, 400, 'GRAPHQL_OPERATION_NOT_FOUND', { operationName: 'Other' });
    const unnamed = await post(stack, { query: 'query A { __typename } query B { __typename }' });
    expectRefused([unnamed], 400, 'GRAPHQL_OPERATION_NOT_FOUND', { operationName: null });
  });

  it('answers a subscription sent over HTTP POST with 400 GRAPHQL_SUBSCRIPTION_NEEDS_WEBSOCKET', async () => {
    const answers = await attackWhileProbing({
      query: 'subscription { catalogChanged { kind id } }',
    });
    expectRefused(answers, 400, 'GRAPHQL_SUBSCRIPTION_NEEDS_WEBSOCKET');
  });
});

describe('item 11: no schema details in errors when introspection is off', () => {
  it('drops "Did you mean" suggestions from validation errors', async () => {
    const answers = await attackWhileProbing(
      { query: '{ polic(id: "1") { id } catalog { maturityOrdr } }' },
      quiet,
    );
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.errors!.map((error) => error.extensions?.code)).toEqual([
        'GRAPHQL_VALIDATION_FAILED',
        'GRAPHQL_VALIDATION_FAILED',
      ]);
      expect(JSON.stringify(answer.body)).not.toMatch(
        /Did you mean|"policy"|maturityOrder|policies/,
      );
    }
    // The development instance (introspection on) still helps: the suggestion is the only difference.
    const helped = await post(stack, { query: '{ polic(id: "1") { id } }' });
    expect(helped.body.errors![0].message).toMatch(/Did you mean "policy"/);
  });

  it('drops suggestions from variable errors and refuses introspection', async () => {
    const decide =
      'mutation ($d: EscalationDecision!) { decideEscalation(pollRef: "esc_000000000000000000000000", decision: $d) { state } }';
    const [typo] = await attackWhileProbing({ query: decide, variables: { d: 'APPROV' } }, quiet);
    expect(typo.status).toBe(400);
    expect(typo.body.errors![0].extensions).toMatchObject({ code: 'REQUEST_INVALID', status: 400 });
    expect(typo.body.errors![0].message).not.toMatch(/Did you mean|APPROVE/);
    const [introspection] = await attackWhileProbing({ query: getIntrospectionQuery() }, quiet);
    expect(introspection.status).toBe(400);
    expect(introspection.body.errors![0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify(introspection.body)).not.toMatch(/Did you mean/);
  });
});
