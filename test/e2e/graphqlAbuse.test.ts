// Issue 15, the GraphQL abuse cases of items 7, 8 and 11 (and item 3's two GraphQL inputs), each
// sent to POST /graphql as an attacker would: every one is refused with a 4xx, the documented
// error and a code, nothing is written, and /healthz, probed beside each attack, answers 200
// throughout. The attacks themselves are in test/support/graphqlAttacks.ts; how fast /healthz
// answers during them is measured by `npm run bench:abuse` (bench/abuse.ts), never asserted here.
// Priced fields (item 1) are in graphqlPaidRoutes.test.ts; subscriptions (9, 10) in graphqlSubscriptionsAbuse.test.ts.
import { NOW_MS, freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { GRAPHQL_LIMIT_DEFAULTS } from '../../platform/config';
import {
  GRAPHQL_ATTACKS as ATTACKS,
  REPEATED_FIELD_COPIES,
  aliasedPreflights,
  type GraphQLRequest,
} from '../support/graphqlAttacks';
import { probeHealth } from '../support/healthProbe';
import { startTestStack, postJson, type TestStack } from '../support/stack';

interface GraphQLAnswer {
  status: number;
  body: {
    data?: unknown;
    errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
  };
}

let stack: TestStack;
let quiet: TestStack;

async function post(target: TestStack, request: GraphQLRequest): Promise<GraphQLAnswer> {
  const response = await fetch(`${target.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  return { status: response.status, body: (await response.json()) as GraphQLAnswer['body'] };
}

/**
 * Sends the request three times while /healthz is asked back to back beside it (at least three
 * times); every health probe must answer 200. Returns every answer to the attack.
 */
async function attackWhileProbing(
  request: GraphQLRequest,
  target: TestStack = stack,
): Promise<GraphQLAnswer[]> {
  const answers: GraphQLAnswer[] = [];
  const probe = probeHealth(target.url);
  try {
    for (let round = 0; round < 3; round += 1) answers.push(await post(target, request));
  } finally {
    const health = await probe.stop(3);
    expect(health.failures).toBe(0);
    expect(health.probes).toBeGreaterThanOrEqual(3);
  }
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
    expect(ATTACKS.doublingRoot.request.query).toHaveLength(904);
    expectRefused(
      await attackWhileProbing(ATTACKS.doublingRoot.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      {
        limit: 'rootFields',
        actual: 2 ** 22,
      },
    );
  });

  it('counts __typename below the root too: doubling fragments inside a field exceed the field limit', async () => {
    expectRefused(
      await attackWhileProbing(ATTACKS.doublingField.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      {
        limit: 'fields',
        actual: 1 + 2 ** 24,
      },
    );
  });

  it('refuses a document over the token limit before graphql-js parses or validates it', async () => {
    expectRefused(
      await attackWhileProbing(ATTACKS.overTokenLimit.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      {
        limit: 'tokens',
        max: GRAPHQL_LIMIT_DEFAULTS.maxTokens,
      },
    );
  });

  it('keeps graphql-js validation bounded: the same field repeated as often as the token limit allows', async () => {
    // Field merging compares repeated fields pairwise; the token limit is what bounds their number.
    expect(REPEATED_FIELD_COPIES).toBe(Math.floor((GRAPHQL_LIMIT_DEFAULTS.maxTokens - 2) / 4));
    expectRefused(
      await attackWhileProbing(ATTACKS.repeatedField.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      {
        limit: 'rootFields',
        actual: REPEATED_FIELD_COPIES,
      },
    );
  });

  it('refuses more aliases than the limit, even on a free field', async () => {
    expectRefused(
      await attackWhileProbing(ATTACKS.tooManyAliases.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      { limit: 'aliases', max: GRAPHQL_LIMIT_DEFAULTS.maxAliases },
    );
  });
});

describe('item 8: aliases that repeat work and mutations', () => {
  it('refuses 1,500 aliased issueSignInNonce from an anonymous caller and writes no nonce', async () => {
    const before = await nonceRows();
    expectRefused(
      await attackWhileProbing(ATTACKS.aliasedNonces.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      {
        limit: 'tokens',
      },
    );
    expect(await nonceRows()).toBe(before);
  });

  it('runs one mutation field per request: two are refused before either runs', async () => {
    const before = await nonceRows();
    expectRefused(
      await attackWhileProbing(ATTACKS.twoMutations.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      {
        limit: 'mutations',
        max: 1,
        actual: 2,
      },
    );
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
      const answers = await attackWhileProbing(
        aliasedPreflights(count, created.body.policyId, intent),
      );
      expectRefused(answers, 400, 'GRAPHQL_QUERY_TOO_LARGE', { limit });
      const decided = await stack.db.pool.query(
        'SELECT 1 FROM intent.decisions WHERE policy_id = $1',
        [created.body.policyId],
      );
      expect(decided.rowCount).toBe(0);
    },
  );

  it('caps root fields per query operation', async () => {
    expectRefused(
      await attackWhileProbing(ATTACKS.tooManyRootFields.request),
      400,
      'GRAPHQL_QUERY_TOO_LARGE',
      {
        limit: 'rootFields',
        max: GRAPHQL_LIMIT_DEFAULTS.maxRootFields,
        actual: GRAPHQL_LIMIT_DEFAULTS.maxRootFields + 1,
      },
    );
  });
});

describe('item 3: GraphQL requests that cannot run as sent', () => {
  it('answers a mismatched operationName with 400 GRAPHQL_OPERATION_NOT_FOUND', async () => {
    const answers = await attackWhileProbing(ATTACKS.operationNameMismatch.request);
    expectRefused(answers, 400, 'GRAPHQL_OPERATION_NOT_FOUND', { operationName: 'Other' });
    const unnamed = await post(stack, { query: 'query A { __typename } query B { __typename }' });
    expectRefused([unnamed], 400, 'GRAPHQL_OPERATION_NOT_FOUND', { operationName: null });
  });

  it('answers a subscription sent over HTTP POST with 400 GRAPHQL_SUBSCRIPTION_NEEDS_WEBSOCKET', async () => {
    const answers = await attackWhileProbing(ATTACKS.subscriptionOverPost.request);
    expectRefused(answers, 400, 'GRAPHQL_SUBSCRIPTION_NEEDS_WEBSOCKET');
  });
});

describe('item 11: no schema details in errors when introspection is off', () => {
  it('drops "Did you mean" suggestions from validation errors', async () => {
    const answers = await attackWhileProbing(ATTACKS.misspeltFields.request, quiet);
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
    const [typo] = await attackWhileProbing(ATTACKS.misspeltVariable.request, quiet);
    expect(typo.status).toBe(400);
    expect(typo.body.errors![0].extensions).toMatchObject({ code: 'REQUEST_INVALID', status: 400 });
    expect(typo.body.errors![0].message).not.toMatch(/Did you mean|APPROVE/);
    const [introspection] = await attackWhileProbing(ATTACKS.introspection.request, quiet);
    expect(introspection.status).toBe(400);
    expect(introspection.body.errors![0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify(introspection.body)).not.toMatch(/Did you mean/);
  });
});
