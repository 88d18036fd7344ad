// Issue 15 item 1, generated from the route table: every root field a priced REST route runs is
// unreachable on POST /graphql for every actor (anonymous, consumer and owner sessions, admin), as
// sent and hidden in an aliased fragment, and on the subgraph that serves it without the gateway's
// signed paid-call claim; the REST route itself (served here without x402) still answers.
import type { ApolloServer } from '@apollo/server';
import {
  Kind,
  parse,
  print,
  type DefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NOW_MS, freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { routeKey, routeRootFields } from '../../gateway/graphql/paidFields';
import { loadPersistedDocuments } from '../../gateway/rest/documents';
import { buildRoutes } from '../../gateway/rest/routes';
import type { RouteDefinition } from '../../gateway/rest/types';
import { ANONYMOUS, type Actor, signActor } from '../../platform/actor';
import { createSubgraphServer, executeInProcess, type SubgraphContext } from '../../subgraphs/kit';
import { insertConsumerIntent } from '../../subgraphs/intent/consumer/store';
import { subgraphModules } from '../../subgraphs/registry';
import { signIn } from '../support/siwe';
import { startTestStack, postJson, type TestStack } from '../support/stack';

interface Policy {
  policyId: string;
  policyHash: string;
}

/**
 * A REST body each priced route with a GraphQL operation accepts. A new priced route needs a row
 * here, or the first test fails: its fields must be proven unreachable like the others.
 */
const EXAMPLE_BODIES: Readonly<Record<string, (policy: Policy) => Record<string, unknown>>> = {
  'POST /preflight_payment': (policy) => ({
    policyId: policy.policyId,
    intent: freshWireIntent(policy, NOW_MS),
  }),
  'POST /detect_duplicate': (policy) => ({
    policyId: policy.policyId,
    intent: freshWireIntent(policy, NOW_MS),
  }),
  'POST /reconcile_agent_spend': (policy) => ({
    policyId: policy.policyId,
    from: '2026-11-01T00:00:00Z',
    to: '2026-11-22T00:00:00Z',
  }),
  'POST /builder/suggest_names': () => ({ idea: 'coffee roasting', count: 3 }),
  'POST /builder/brand_pack': () => ({ idea: 'coffee roasting' }),
  'POST /verify_delivery': () => ({
    capability: 'travel.book',
    params: { from: 'AMS' },
    providerAttested: { status: 'ATTESTED', fields: { booked: true } },
  }),
  'POST /generate_dispute_packet': () => ({ intentId: SEEDED_INTENT }),
  'POST /score_vendor': () => ({ provider: SCORED_VENDOR }),
  'POST /score_buyer': (policy) => ({ agentId: SCORED_AGENT, policyId: policy.policyId }),
};

/** A consumer intent of the policy, for the routes whose example reads one. */
const SEEDED_INTENT = `ci_${'d1'.repeat(12)}`;
/** The vendor and buyer beforeAll gives a scoreable history (too little is refused before any 402). */
const SCORED_VENDOR = 'vendor.example';
const SCORED_AGENT = 'agent-1';

/**
 * Routes whose example reads a record only some callers may read, and routes for signed-in callers,
 * run as an admin (REST bearer and subgraph actor); every other route's example runs anonymous.
 */
const ADMIN_EXAMPLES: ReadonlySet<string> = new Set([
  'POST /generate_dispute_packet',
  'POST /score_buyer',
]);
const exampleActor = (route: RouteDefinition): Actor =>
  ADMIN_EXAMPLES.has(routeKey(route)) || route.auth !== 'public' ? { kind: 'admin' } : ANONYMOUS;

const routes = buildRoutes();
const documents = loadPersistedDocuments();
const pricedOperations = routes.filter(
  (route) => route.price.kind === 'paid' && route.operation !== undefined,
);
const owner = privateKeyToAccount(generatePrivateKey());
const SECRET = Buffer.alloc(32, 7);

let stack: TestStack;
let policy: Policy;
const tokens = new Map<string, string | undefined>();

function variablesFor(route: RouteDefinition): Record<string, unknown> {
  const body = EXAMPLE_BODIES[routeKey(route)](policy);
  return route.operation!.variables({
    params: {},
    query: {},
    body,
    actor: exampleActor(route),
    now: new Date(NOW_MS),
  });
}

/** The route's operation with every root field aliased and moved into an inline fragment inside a named fragment. */
function hiddenInFragment(source: string, operationName: string): string {
  const document = parse(source);
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION && definition.name?.value === operationName,
  )!;
  const aliased = operation.selectionSet.selections.map((selection): SelectionNode =>
    selection.kind === Kind.FIELD
      ? { ...selection, alias: { kind: Kind.NAME, value: `hidden_${selection.name.value}` } }
      : selection,
  );
  const fragment: DefinitionNode = {
    kind: Kind.FRAGMENT_DEFINITION,
    name: { kind: Kind.NAME, value: 'Hidden' },
    typeCondition: {
      kind: Kind.NAMED_TYPE,
      name: { kind: Kind.NAME, value: operation.operation === 'mutation' ? 'Mutation' : 'Query' },
    },
    selectionSet: {
      kind: Kind.SELECTION_SET,
      selections: [
        {
          kind: Kind.INLINE_FRAGMENT,
          selectionSet: { kind: Kind.SELECTION_SET, selections: aliased },
        },
      ],
    },
  };
  const spread: SelectionNode = {
    kind: Kind.FRAGMENT_SPREAD,
    name: { kind: Kind.NAME, value: 'Hidden' },
  };
  const others = document.definitions.filter((definition) => definition !== operation);
  return print({
    kind: Kind.DOCUMENT,
    definitions: [
      { ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections: [spread] } },
      fragment,
      ...others,
    ],
  });
}

async function postGraphQL(
  query: string,
  operationName: string,
  variables: Record<string, unknown>,
  token?: string,
) {
  const response = await fetch(`${stack.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, operationName, variables }),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      data?: unknown;
      errors?: Array<{ extensions?: Record<string, unknown> }>;
    },
  };
}

async function decisionRows(): Promise<number> {
  const result = await stack.db.pool.query<{ n: string }>(
    'SELECT (SELECT count(*) FROM intent.decisions) + (SELECT count(*) FROM intent.reservations) + (SELECT count(*) FROM policy.escalations) AS n',
  );
  return Number(result.rows[0].n);
}

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(NOW_MS) });
  const created = await postJson(
    stack.url,
    '/create_spend_policy',
    { policy: policyDocument({ owner: owner.address }) },
    stack.adminToken,
  );
  expect(created.status).toBe(201);
  policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
  await insertConsumerIntent(stack.db.pool, {
    intentId: SEEDED_INTENT,
    policyId: policy.policyId,
    wallet: owner.address,
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: { domain: 'seeded.test' },
    idempotencyKey: null,
    now: new Date(NOW_MS),
  });
  // Five verified outcomes each, as migration 0020's counters keep them (no purchase runs here).
  const seenAt = new Date(NOW_MS - 3_600_000);
  await stack.db.pool.query(
    'INSERT INTO intent.trust_vendor_outcomes (provider, verified, first_seen_at) VALUES ($1, 5, $2)',
    [SCORED_VENDOR, seenAt],
  );
  await stack.db.pool.query(
    'INSERT INTO intent.trust_buyer_outcomes (policy_id, agent_id, verified, first_seen_at) VALUES ($1::numeric, $2, 5, $3)',
    [policy.policyId, SCORED_AGENT, seenAt],
  );
  tokens.set('anonymous', undefined);
  tokens.set('consumer session', await signIn(stack.url, owner, policy.policyId));
  tokens.set('owner session', await signIn(stack.url, owner));
  tokens.set('admin', stack.adminToken);
});

afterAll(async () => {
  await stack?.stop();
});

test('the route table has priced operations, and every one of them has an example body here', () => {
  const fields = pricedOperations.flatMap((route) => routeRootFields(route, documents));
  expect(fields).toEqual(
    expect.arrayContaining(['Mutation.preflightPayment', 'Query.detectDuplicate']),
  );
  expect(pricedOperations.map(routeKey).filter((key) => EXAMPLE_BODIES[key] === undefined)).toEqual(
    [],
  );
});

describe.each(pricedOperations.map((route) => [routeKey(route), route] as const))(
  '%s',
  (_key, route) => {
    const operation = route.operation!;

    test('its operation is refused on POST /graphql for every actor, as sent and hidden in a fragment, and changes nothing', async () => {
      const before = await decisionRows();
      const source = documents.get(operation.document)!;
      const fields = routeRootFields(route, documents);
      for (const [who, token] of tokens) {
        for (const query of [source, hiddenInFragment(source, operation.operationName)]) {
          const answer = await postGraphQL(
            query,
            operation.operationName,
            variablesFor(route),
            token,
          );
          expect({ who, status: answer.status, data: answer.body.data ?? null }).toEqual({
            who,
            status: 403,
            data: null,
          });
          expect(answer.body.errors).toHaveLength(1);
          expect(answer.body.errors![0].extensions).toMatchObject({
            code: 'PAID_ROUTE_ONLY',
            retryable: false,
            details: { field: fields[0], routes: [routeKey(route)] },
          });
        }
      }
      expect(await decisionRows()).toBe(before);
    });

    test('the subgraph serving it refuses every actor without the paid-call claim and runs it with one', async () => {
      const servers: Array<ApolloServer<SubgraphContext>> = [];
      try {
        const rootNames = routeRootFields(route, documents).map((field) => field.split('.'));
        let serving = 0;
        for (const module of subgraphModules()) {
          const schema = await module.buildSchema();
          const served = rootNames.some(
            ([type, name]) =>
              (type === 'Mutation' ? schema.getMutationType() : schema.getQueryType())?.getFields()[
                name
              ],
          );
          if (!served) continue;
          serving += 1;
          const server = await createSubgraphServer(module, {
            db: stack.db.pool,
            actorSecret: SECRET,
            now: () => new Date(NOW_MS),
          });
          servers.push(server);
          const actors: Actor[] = [
            ANONYMOUS,
            { kind: 'admin' },
            { kind: 'owner', address: owner.address.toLowerCase() },
          ];
          actors.push({
            kind: 'consumer',
            address: owner.address.toLowerCase(),
            policyId: policy.policyId,
          });
          const run = (header: string) =>
            executeInProcess(
              server,
              {
                query: documents.get(operation.document)!,
                operationName: operation.operationName,
                variables: variablesFor(route),
              },
              { actorHeader: header },
            );
          for (const actor of actors) {
            const refused = await run(signActor(actor, SECRET, NOW_MS));
            expect({
              actor,
              codes: refused.errors?.map((error) => error.extensions?.code),
            }).toEqual({ actor, codes: ['PAID_ROUTE_ONLY'] });
          }
          const paid = await run(signActor(exampleActor(route), SECRET, NOW_MS, routeKey(route)));
          expect(paid.errors).toBeUndefined();
        }
        expect(serving).toBeGreaterThan(0);
      } finally {
        for (const server of servers) await server.stop();
      }
    });

    test('the REST route itself still runs it (served without x402 in this stack)', async () => {
      const answer = await postJson(
        stack.url,
        route.path,
        EXAMPLE_BODIES[routeKey(route)](policy),
        ADMIN_EXAMPLES.has(routeKey(route)) || route.auth !== 'public'
          ? stack.adminToken
          : undefined,
      );
      expect(answer.status).toBe(200);
    });
  },
);
