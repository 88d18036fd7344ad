// The GraphQL abuse cases of issue 15 (items 3, 7, 8 and 11) as an attacker sends them to POST
// /graphql, each with the refusal it must get. Shared by test/e2e/graphqlAbuse.test.ts, which
// asserts every refusal in detail (and that nothing is written), and bench/abuse.ts, which measures
// how /healthz answers beside each one. Built once at import: the strings are the attack.
import { getIntrospectionQuery } from 'graphql';
import { GRAPHQL_LIMIT_DEFAULTS } from '../../platform/config';

export interface GraphQLRequest {
  readonly query: string;
  readonly variables?: Record<string, unknown>;
  readonly operationName?: string;
}

export interface GraphQLAttack {
  readonly request: GraphQLRequest;
  /** The refusal every send gets: its HTTP status and the code of its first error. */
  readonly status: number;
  readonly code: string;
  /** Aimed at an instance with introspection off (as in production), where errors name no schema detail. */
  readonly introspectionOff?: boolean;
}

/** `fragment F0 on <type> { ...F1 ...F1 }` … down to `fragment F<levels> on <type> { <leaf> }`. */
export function doublingFragments(levels: number, type: string, leaf: string): string {
  let source = `fragment F${levels} on ${type} { ${leaf} }`;
  for (let level = levels - 1; level >= 0; level -= 1)
    source += ` fragment F${level} on ${type} { ...F${level + 1} ...F${level + 1} }`;
  return source;
}

/** How often `catalog { maturityOrder }` fits in one document under the token limit. */
export const REPEATED_FIELD_COPIES = Math.floor((GRAPHQL_LIMIT_DEFAULTS.maxTokens - 2) / 4);

const TOO_LARGE = { status: 400, code: 'GRAPHQL_QUERY_TOO_LARGE' } as const;
const TOO_MANY_ALIASES = Array.from(
  { length: GRAPHQL_LIMIT_DEFAULTS.maxAliases + 1 },
  (_, index) => `a${index}: maturityOrder`,
).join(' ');
const TOO_MANY_ROOTS = Array.from(
  { length: GRAPHQL_LIMIT_DEFAULTS.maxRootFields + 1 },
  (_, index) => `c${index}: catalog { maturityOrder }`,
).join(' ');

export const GRAPHQL_ATTACKS = {
  /** Item 7: 904 bytes that expand to 2^22 root __typename. */
  doublingRoot: {
    ...TOO_LARGE,
    request: { query: `query { ...F0 } ${doublingFragments(22, 'Query', '__typename')}` },
  },
  /** Item 7: the same below the root, 1 + 2^24 fields. */
  doublingField: {
    ...TOO_LARGE,
    request: { query: `{ catalog { ...F0 } } ${doublingFragments(24, 'Catalog', '__typename')}` },
  },
  /** Item 7: a document over the token limit, refused before graphql-js parses it. */
  overTokenLimit: {
    ...TOO_LARGE,
    request: { query: `{ ${'__typename '.repeat(GRAPHQL_LIMIT_DEFAULTS.maxTokens)} }` },
  },
  /** Item 7: one field repeated as often as the token limit allows (field merging is pairwise). */
  repeatedField: {
    ...TOO_LARGE,
    request: { query: `{ ${'catalog { maturityOrder } '.repeat(REPEATED_FIELD_COPIES)}}` },
  },
  /** Item 7: one alias more than the limit, on a free field. */
  tooManyAliases: { ...TOO_LARGE, request: { query: `{ catalog { ${TOO_MANY_ALIASES} } }` } },
  /** Item 8: 1,500 aliased issueSignInNonce from an anonymous caller. */
  aliasedNonces: {
    ...TOO_LARGE,
    request: {
      query: `mutation { ${Array.from({ length: 1500 }, (_, index) => `n${index}: issueSignInNonce { nonce }`).join(' ')} }`,
    },
  },
  /** Item 8: two mutation fields in one request. */
  twoMutations: {
    ...TOO_LARGE,
    request: {
      query: 'mutation { first: issueSignInNonce { nonce } second: issueSignInNonce { nonce } }',
    },
  },
  /** Item 8: one root field more than the limit. */
  tooManyRootFields: { ...TOO_LARGE, request: { query: `{ ${TOO_MANY_ROOTS} }` } },
  /** Item 3: an operationName the document does not hold. */
  operationNameMismatch: {
    status: 400,
    code: 'GRAPHQL_OPERATION_NOT_FOUND',
    request: { query: 'query Catalog { catalog { maturityOrder } }', operationName: 'Other' },
  },
  /** Item 3: a subscription over HTTP POST. */
  subscriptionOverPost: {
    status: 400,
    code: 'GRAPHQL_SUBSCRIPTION_NEEDS_WEBSOCKET',
    request: { query: 'subscription { catalogChanged { kind id } }' },
  },
  /** Item 11: misspelt fields, which must draw no "Did you mean" with introspection off. */
  misspeltFields: {
    status: 400,
    code: 'GRAPHQL_VALIDATION_FAILED',
    introspectionOff: true,
    request: { query: '{ polic(id: "1") { id } catalog { maturityOrdr } }' },
  },
  /** Item 11: a misspelt enum value in a variable. */
  misspeltVariable: {
    status: 400,
    code: 'REQUEST_INVALID',
    introspectionOff: true,
    request: {
      query:
        'mutation ($d: EscalationDecision!) { decideEscalation(pollRef: "esc_000000000000000000000000", decision: $d) { state } }',
      variables: { d: 'APPROV' },
    },
  },
  /** Item 11: the introspection query itself. */
  introspection: {
    status: 400,
    code: 'GRAPHQL_VALIDATION_FAILED',
    introspectionOff: true,
    request: { query: getIntrospectionQuery() },
  },
} as const satisfies Record<string, GraphQLAttack>;

/** Item 8: `count` aliased preflightPayment of one intent (refused before any is decided). */
export function aliasedPreflights(
  count: number,
  policyId: string,
  intent: Record<string, unknown>,
): GraphQLRequest {
  const fields = Array.from(
    { length: count },
    (_, index) => `p${index}: preflightPayment(policyId: $p, intent: $i)`,
  ).join(' ');
  return {
    query: `mutation ($p: ID, $i: JSONObject) { ${fields} }`,
    variables: { p: policyId, i: intent },
  };
}
