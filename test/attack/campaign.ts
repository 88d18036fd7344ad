// A seeded fuzz campaign: draws `runs` requests from the surface (fast-check, so a seed replays
// the same choices), sends them one at a time, and judges every answer. It never stops at the
// first failure: it groups failures into classes (target, status, code, rule broken) with the
// smallest example of each, and counts answers by status.
import http from 'node:http';
import fc from 'fast-check';
import { type AttackRequest, describeRequest, sendAttack } from './http';
import { attackRequest } from './requests';
import type { AttackTarget } from './surface';
import { likelyTrigger } from './triggers';
import type { FuzzWorld } from './values';
import { answerCode, judge, type VerdictContext, type Violation } from './verdict';

export interface CampaignOptions {
  readonly runs: number;
  readonly seed: number;
  /** A request without an answer after this long is a hang. */
  readonly timeoutMs: number;
}

export interface FailureClass {
  /** e.g. "500 INTERNAL_ERROR: 5xx (status 500) ← a bad %-encoding in the path". */
  readonly key: string;
  count: number;
  /** Where it happened: "GET /receipt_status/:receiptId", … */
  readonly routes: Set<string>;
  /** The smallest request seen in this class. */
  example: string;
  exampleSize: number;
}

export interface CampaignResult {
  readonly name: string;
  readonly seed: number;
  readonly runs: number;
  /** Answers by status ("hang" and "no-answer" for none). */
  readonly byStatus: Record<string, number>;
  /** The same per target ("POST /preflight_payment"), to see that every route was reached past its first check. */
  readonly byTarget: Record<string, Record<string, number>>;
  readonly failures: FailureClass[];
  readonly slowestMs: number;
}

/** Groups by answer, broken rule and likely trigger; the routes it happened on are listed per class. */
function classKey(
  request: AttackRequest,
  status: string,
  code: string | null,
  violation: Violation,
): string {
  // A served non-JSON body names its own cause (the media type) in the reason.
  const trigger = violation.kind === 'non-json-accepted' ? '' : ` ← ${likelyTrigger(request)}`;
  return `${status}${code ? ` ${code}` : ''}: ${violation.kind} (${violation.reason})${trigger}`;
}

function requestSize(request: AttackRequest): number {
  return (
    request.path.length +
    (request.body?.length ?? 0) +
    Object.values(request.headers).join('').length
  );
}

/** Runs one campaign against `baseUrl`; `name` labels the stack in reports. */
export async function runCampaign(
  name: string,
  baseUrl: string,
  targets: readonly AttackTarget[],
  world: FuzzWorld,
  context: VerdictContext,
  options: CampaignOptions,
): Promise<CampaignResult> {
  const byStatus: Record<string, number> = {};
  const byTarget: Record<string, Record<string, number>> = {};
  const failures = new Map<string, FailureClass>();
  const agent = new http.Agent({ keepAlive: false, maxSockets: 1 });
  let slowestMs = 0;
  try {
    const property = fc.asyncProperty(attackRequest(targets, world), async (request) => {
      const answer = await sendAttack(baseUrl, request, options.timeoutMs, agent);
      const status = answer.kind === 'response' ? String(answer.status) : answer.kind;
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      const perTarget = (byTarget[`${request.method} ${request.label}`] ??= {});
      perTarget[status] = (perTarget[status] ?? 0) + 1;
      slowestMs = Math.max(slowestMs, answer.ms);
      const code = answerCode(answer);
      for (const violation of judge(request, answer, context)) {
        const key = classKey(request, status, code, violation);
        const size = requestSize(request);
        const known = failures.get(key);
        const route = `${request.method} ${request.label}`;
        if (!known)
          failures.set(key, {
            key,
            count: 1,
            routes: new Set([route]),
            example: describeRequest(request),
            exampleSize: size,
          });
        else {
          known.count += 1;
          known.routes.add(route);
          if (size < known.exampleSize)
            Object.assign(known, { example: describeRequest(request), exampleSize: size });
        }
      }
      // Every answer is recorded; the caller asserts on the classes, so the run never stops early.
      return true;
    });
    const details = await fc.check(property, {
      seed: options.seed,
      numRuns: options.runs,
      endOnFailure: true,
    });
    if (details.failed)
      throw new Error(`the campaign itself failed: ${String(details.errorInstance)}`);
  } finally {
    agent.destroy();
  }
  return {
    name,
    seed: options.seed,
    runs: options.runs,
    byStatus,
    byTarget,
    failures: [...failures.values()].sort((a, b) => a.key.localeCompare(b.key)),
    slowestMs,
  };
}

function countsText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
}

/** The report: seed, counts by status (per target too when `perTarget`), then each failure class with its example. */
export function formatCampaign(
  result: CampaignResult,
  options: { perTarget?: boolean } = {},
): string {
  const lines = [
    `[attack] ${result.name}: seed ${result.seed}, ${result.runs} requests; by status ${countsText(result.byStatus)}; slowest ${result.slowestMs} ms`,
  ];
  if (options.perTarget) {
    for (const target of Object.keys(result.byTarget).sort())
      lines.push(`    ${target}: ${countsText(result.byTarget[target])}`);
  }
  if (result.failures.length === 0) lines.push(`[attack] ${result.name}: no failures`);
  for (const failure of result.failures) {
    lines.push(
      `  ✗ ${failure.key} ×${failure.count}\n      on ${[...failure.routes].sort().join(', ')}\n      e.g. ${failure.example}`,
    );
  }
  return lines.join('\n');
}

/** One line per failure class, for assertions that print every class when they fail. */
export function failureLines(result: CampaignResult): string[] {
  return result.failures.map(
    (failure) =>
      `${failure.key} on ${[...failure.routes].sort().join(', ')} — e.g. ${failure.example}`,
  );
}
