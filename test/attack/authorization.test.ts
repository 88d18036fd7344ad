// The authorization matrix on the real stack (x402 on): every operation of the route table and of
// the GraphQL schema × {anonymous, consumer of A, consumer of B, owner A, owner B, admin}, each
// cell's answer class against authorization-matrix.ts, no data of policy A in any answer that is
// not meant to hold it, and priced operations unreachable unpaid by every actor. An operation
// without a row fails here until someone decides who may call it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, Kind, parse, type OperationDefinitionNode } from 'graphql';
import { loadPersistedDocuments } from '../../gateway/rest/documents';
import { buildRoutes } from '../../gateway/rest/routes';
import { Fanout } from '../../gateway/subscriptions/fanout';
import { buildSubscriptionSchema } from '../../gateway/subscriptions/schema';
import { projectRoot } from '../../platform/paths';
import { DEFAULT_SUBSCRIPTION_LIMITS } from '../../platform/config';
import { ACTORS, type ActorName, MATRIX, type Row } from './authorization-matrix';
import { TOOL_BINDINGS } from '../../gateway/mcp/tools';
import { runCell, runCellWithCode } from './matrixCells';
import { type MatrixWorld, startMatrixWorld } from './matrixWorld';
import { MCP_MATRIX, mcpInvocations, mcpOperation, routeOfTool } from './mcpMatrix';
import { OPERATIONS } from './operations';

/**
 * Every operation of the public surface, named as the matrix names them: the route table, the
 * client schema's root fields, the gateway's subscriptions, and the fields priced routes run (kept
 * even if the public schema stops exposing them, so their refusal stays tested).
 */
function surfaceOperations(): string[] {
  const rest = buildRoutes().map((route) => `${route.method} ${route.path}`);
  const schema = buildSchema(
    readFileSync(path.join(projectRoot(), 'schema', 'api.graphql'), 'utf8'),
  );
  const gatewaySubscriptions = buildSubscriptionSchema(
    new Fanout(),
    undefined,
    DEFAULT_SUBSCRIPTION_LIMITS,
  );
  const fields = (type: string, names: string[]) => names.map((name) => `${type}.${name}`);
  return [
    ...new Set([
      ...rest,
      ...fields('Query', Object.keys(schema.getQueryType()?.getFields() ?? {})),
      ...fields('Mutation', Object.keys(schema.getMutationType()?.getFields() ?? {})),
      ...fields('Subscription', Object.keys(schema.getSubscriptionType()?.getFields() ?? {})),
      ...fields(
        'Subscription',
        Object.keys(gatewaySubscriptions.getSubscriptionType()?.getFields() ?? {}),
      ),
      ...pricedGraphQLFields(),
    ]),
  ].sort();
}

/** The GraphQL root fields a priced route runs (its persisted document's operation). */
function pricedGraphQLFields(): string[] {
  const documents = loadPersistedDocuments();
  return buildRoutes().flatMap((route) => {
    if (route.price.kind !== 'paid' || !route.operation) return [];
    const definition = parse(documents.get(route.operation.document)!).definitions.find(
      (node): node is OperationDefinitionNode => node.kind === Kind.OPERATION_DEFINITION,
    )!;
    const type =
      definition.operation === 'query'
        ? 'Query'
        : definition.operation === 'mutation'
          ? 'Mutation'
          : 'Subscription';
    return definition.selectionSet.selections.flatMap((selection) =>
      selection.kind === Kind.FIELD ? [`${type}.${selection.name.value}`] : [],
    );
  });
}

test('every operation of the route table and the GraphQL schema has exactly one row, and an invocation', () => {
  const operations = surfaceOperations();
  expect(Object.keys(MATRIX).sort()).toEqual(operations);
  expect(Object.keys(OPERATIONS).sort()).toEqual(operations);
});

test("every MCP tool has a row, its REST route's (one table, two transports), and an invocation", () => {
  expect(Object.keys(MCP_MATRIX).sort()).toEqual(TOOL_BINDINGS.map(mcpOperation).sort());
  for (const tool of TOOL_BINDINGS) {
    const route = routeOfTool(tool);
    expect({ tool: tool.name, row: MCP_MATRIX[mcpOperation(tool)] }).toEqual({
      tool: tool.name,
      row: MATRIX[route],
    });
    expect({ tool: tool.name, row: MATRIX[route] !== undefined }).toEqual({
      tool: tool.name,
      row: true,
    });
    expect({ tool: tool.name, invocation: typeof OPERATIONS[route] }).toEqual({
      tool: tool.name,
      invocation: 'function',
    });
  }
});

/**
 * Priced routes sold only about a record of A (the dispute packet of A's intent): its readers are
 * offered the payment, anyone else is refused before any 402 (401 without a credential, else the
 * 404 of a missing record), so nobody is charged for an answer they may not have.
 */
const READER_PRICED: ReadonlySet<string> = new Set(['POST /generate_dispute_packet']);
/** Priced routes that refuse a caller who may not use them before any 402 (docs/rest.md). */
const REFUSES_BEFORE_PAYMENT: ReadonlySet<string> = new Set(['POST /score_buyer']);

test('every priced operation is priced for every actor (or refused before any 402 where its route checks first): the route, and the GraphQL field it runs', () => {
  const paidRoutes = buildRoutes().filter((route) => route.price.kind === 'paid');
  // A priced route for signed-in callers refuses the others before any 402 (never a charge);
  // whoever it serves is offered the price, and its GraphQL field stays priced for everyone.
  for (const route of paidRoutes.filter((candidate) => candidate.auth !== 'public')) {
    const cells = Object.values(MATRIX[`${route.method} ${route.path}`]);
    expect(cells.every((cell) => ['402', '401', '403'].includes(cell))).toBe(true);
    expect(MATRIX[`${route.method} ${route.path}`].admin).toBe('402');
  }
  const priced = [
    ...paidRoutes
      .filter((route) => route.auth === 'public')
      .map((route) => `${route.method} ${route.path}`),
    ...pricedGraphQLFields(),
  ];
  expect(pricedGraphQLFields()).toEqual(
    expect.arrayContaining(['Mutation.preflightPayment', 'Query.detectDuplicate']),
  );
  const readerRow = {
    anonymous: '401',
    consumerA: '402',
    consumerB: '404',
    ownerA: '402',
    ownerB: '404',
    admin: '402',
  };
  for (const operation of priced) {
    // A route whose free check refuses some callers before any 402 (so they are never charged for
    // a refusal) still gives them nothing: each cell is the challenge or a refusal.
    const expected = READER_PRICED.has(operation)
      ? readerRow
      : REFUSES_BEFORE_PAYMENT.has(operation)
        ? Object.fromEntries(
            ACTORS.map((actor) => [actor, expect.stringMatching(/^(402|401|403|404)$/)]),
          )
        : Object.fromEntries(ACTORS.map((actor) => [actor, '402']));
    expect({ operation, row: MATRIX[operation] }).toEqual({ operation, row: expected });
  }
  for (const operation of REFUSES_BEFORE_PAYMENT)
    expect(Object.values(MATRIX[operation]!)).toContain('402');
});

describe('cells on the real stack', () => {
  let world: MatrixWorld;

  beforeAll(async () => {
    world = await startMatrixWorld();
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  /** Refusals run first, so an allowed write can never hide what a refused one would have done. */
  function cellOrder(row: Row): ActorName[] {
    const allowed = (actor: ActorName) => row[actor] === 'A' || row[actor] === 'ok';
    return [...ACTORS.filter((actor) => !allowed(actor)), ...ACTORS.filter(allowed)];
  }

  test.each(Object.keys(MATRIX))(
    '%s',
    async (operation) => {
      const expected = MATRIX[operation];
      const observed: Record<string, string> = {};
      for (const actor of cellOrder(expected)) {
        observed[actor] = await runCell(
          world,
          await OPERATIONS[operation](world, actor),
          actor,
          expected[actor],
        );
      }
      expect(Object.fromEntries(ACTORS.map((actor) => [actor, observed[actor]]))).toEqual(expected);
    },
    60_000,
  );

  // Each tool as each actor gets its route's verdict, and a refusal carries the REST cell's code
  // (the same request over REST, refusals only: they change nothing) and none of A's data.
  test.each(TOOL_BINDINGS.map((tool) => [mcpOperation(tool), tool] as const))(
    '%s',
    async (_operation, tool) => {
      const expected = MCP_MATRIX[mcpOperation(tool)]!;
      const observed: Record<string, string> = {};
      for (const actor of cellOrder(expected)) {
        const { rest, mcp } = await mcpInvocations(tool, world, actor);
        const overMcp = await runCellWithCode(world, mcp, actor, expected[actor]);
        observed[actor] = overMcp.observed;
        if (['401', '403', '404'].includes(expected[actor])) {
          const overRest = await runCellWithCode(world, rest, actor, expected[actor]);
          expect({ actor, mcp: overMcp.code }).toEqual({ actor, mcp: overRest.code });
          expect({ actor, code: typeof overMcp.code }).toEqual({ actor, code: 'string' });
        }
      }
      expect(Object.fromEntries(ACTORS.map((actor) => [actor, observed[actor]]))).toEqual(expected);
    },
    60_000,
  );
});
