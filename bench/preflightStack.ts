// What the benchmarks that send preflights share: the all-in-one stack's options as a bench runs
// it (the shared rate-limit store with limits no bench reaches, no LISTEN connection) and policies
// with budgets and limits no run reaches, created through the gateway.
import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { AllInOneOptions } from '../cli/stack';
import { policyDocument } from '../core/test-support/spend-fixtures';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import { silentLogger } from '../platform/log';
import type { PolicyRef } from './preflightClients';
import { benchServiceInfo } from './service';

export function benchStackOptions(
  databaseUrl: string,
  secrets: { actorSecret: Buffer; adminToken: string },
  stack: { transport: 'http' | 'in-process'; decisionThread: boolean; db: Pool },
) {
  return {
    host: '127.0.0.1',
    port: 0,
    db: stack.db,
    databaseUrl,
    decisionThread: stack.decisionThread,
    transport: stack.transport,
    subgraphPortBase: 0,
    actorSecret: secrets.actorSecret,
    adminTokenHashes: [createHash('sha256').update(secrets.adminToken).digest()],
    sessionSecret: randomBytes(32),
    listenDatabaseUrl: null,
    graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
    bodyLimitBytes: 65_536,
    // The shared store, as deployed, with limits no bench reaches.
    rateLimit: { limits: uniformLimits(), store: 'postgres' as const, databaseUrl },
    service: benchServiceInfo(),
    log: silentLogger,
  } satisfies AllInOneOptions;
}

/** `count` policies (each its own owner) with budgets and limits no run reaches. */
export async function createPolicies(
  gatewayUrl: string,
  adminToken: string,
  count: number,
): Promise<PolicyRef[]> {
  const policies: PolicyRef[] = [];
  for (let index = 0; index < count; index += 1) {
    const owner = `0x${randomBytes(20).toString('hex')}`;
    const document = policyDocument({
      owner,
      dailyBudget: '1000000.00',
      hardCap: '10.00',
      duplicates: { windowMinutes: 0, keys: ['capability'] },
      rateLimit: { callsPerHour: 1_000_000 },
    });
    const response = await fetch(`${gatewayUrl}/create_spend_policy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ policy: document }),
    });
    const body = (await response.json()) as PolicyRef;
    if (response.status !== 201)
      throw new Error(`policy setup answered ${response.status}: ${JSON.stringify(body)}`);
    policies.push({ policyId: body.policyId, policyHash: body.policyHash });
  }
  return policies;
}
