// Sign-in with Ethereum: the nonce, and the two verify routes (a consumer bearer bound to one
// policy, an owner bearer for the dashboard). The policy subgraph checks the message and the
// signature; the gateway mints the bearer from the verified claims (RouteEdge.issueSession).
import { type BodyField, stringFields } from '../requestBodies';
import { sessionBody } from '../policyMapping';
import { FREE, type RouteDefinition } from '../types';
import { noInput } from './inputs';

const SIGN_IN_FIELDS: readonly BodyField[] = [
  { name: 'message', required: true },
  { name: 'signature', required: true },
];

export const signInNonceRoute: RouteDefinition = {
  method: 'POST',
  path: '/consumer/auth/nonce',
  purpose:
    'a server-generated, single-use sign-in nonce (10 minutes) with the domain, chain id and resource format the SIWE message must name',
  group: 'consumer',
  auth: 'public',
  price: FREE,
  rateLimit: 'sign-in',
  operation: {
    document: 'issueSignInNonce',
    operationName: 'IssueSignInNonce',
    variables: noInput,
    respond: (data) => ({ status: 200, body: data.issueSignInNonce }),
  },
};

/** Both sign-in routes run the one verifySignIn document; only the session kind differs. */
function verifySignInAs(session: 'CONSUMER' | 'OWNER'): RouteDefinition['operation'] {
  return {
    document: 'verifySignIn',
    operationName: 'VerifySignIn',
    variables: (input) => ({ ...stringFields(input, SIGN_IN_FIELDS), session }),
    respond: async (data, _input, edge) => ({
      status: 200,
      body: await sessionBody(data.verifySignIn, session, edge),
    }),
  };
}

export const consumerSignInRoute: RouteDefinition = {
  method: 'POST',
  path: '/consumer/auth/verify',
  purpose:
    'verifies a signed SIWE message naming svc:policy:<policyId> and returns a 30-minute bearer bound to that one policy',
  group: 'consumer',
  auth: 'public',
  price: FREE,
  rateLimit: 'sign-in',
  operation: verifySignInAs('CONSUMER'),
};

export const ownerSignInRoute: RouteDefinition = {
  method: 'POST',
  path: '/owner/auth/verify',
  purpose:
    'the dashboard sign-in: verifies a signed SIWE message naming no policy and returns a 30-minute owner bearer for every policy the address owns',
  group: 'owner',
  auth: 'public',
  price: FREE,
  rateLimit: 'sign-in',
  operation: verifySignInAs('OWNER'),
};
