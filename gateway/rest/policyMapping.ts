// How the policy and sign-in routes answer: operation data as REST bodies (`id` named `policyId`,
// as REST callers send it), and verified sign-in claims as a session bearer minted by the edge.
import { AppError } from '../../core/errors';
import type { SessionClaims } from '../auth/sessions';
import type { RouteEdge } from './types';

type Json = Record<string, unknown>;

interface PolicyData {
  id: string;
  owner: string;
  ownerNonce: string | null;
  name: string;
  version: number;
  status: string;
  state: string;
  policyHash: string;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  rules: Json;
  registration: Json | null;
}

/** The operator routes' policy body: the GraphQL Policy with `id` named `policyId`, as REST callers send it. */
export function operatorPolicyBody(policy: unknown): Json {
  const { id, ...rest } = policy as PolicyData;
  return { policyId: id, ...rest };
}

interface ConsumerPolicyData {
  id: string;
  version: number;
  status: string;
  state: string;
  policyHash: string;
  expiresAt: string | null;
  limits: Json;
}

export function consumerPolicyBody(policy: unknown): Json {
  const { id, version, status, state, policyHash, expiresAt, limits } =
    policy as ConsumerPolicyData;
  return { policyId: id, version, status, state, policyHash, expiresAt, limits };
}

interface ClaimsData {
  address: string;
  session: 'CONSUMER' | 'OWNER';
  policyId: string | null;
  expiresAt: string;
}

/** Mints the bearer for verified claims; a claim of the wrong kind for the route is an internal fault. */
export async function sessionBody(
  data: unknown,
  expected: 'CONSUMER' | 'OWNER',
  edge: RouteEdge,
): Promise<Json> {
  const claims = data as ClaimsData;
  if (claims.session !== expected || (expected === 'CONSUMER') !== (claims.policyId !== null)) {
    throw new AppError('INTERNAL_ERROR', 'The sign-in claims do not match the route.');
  }
  const sessionClaims: SessionClaims = {
    address: claims.address,
    policyId: claims.policyId,
    expiresAt: new Date(claims.expiresAt),
  };
  return { ...(await edge.issueSession(sessionClaims)) };
}
