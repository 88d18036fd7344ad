// Engine micro-benchmark: decisions per second and per-call latency of `evaluate` on one thread,
// over a fixed mix of approved, blocked and escalated spends with realistic ledger windows.
// Inputs are validated once up front; only evaluate itself is timed. Run: npm run bench:engine.
// Throughput is reported per wall second and per CPU second of this process: on a shared machine
// the second says what one core can do, the first what this run happened to get.
import { loadavg } from 'node:os';
import { policyHash, policyIdFor } from '../core/canon/policy-identity';
import { evaluate } from '../core/engine/evaluate';
import type {
  EngineInput,
  LedgerWindow,
  PolicySnapshot,
  RecentApproval,
} from '../core/engine/types';
import { validateSpendIntent, type SpendIntent } from '../core/validation/intent';
import { validatePolicy } from '../core/validation/policy';
import { formatIsoSeconds } from '../core/validation/timestamp';

const POOL_SIZE = 1024;
const WARMUP_DECISIONS = 300_000;
const THROUGHPUT_DECISIONS = 3_000_000;
const LATENCY_SAMPLES = 500_000;
const TARGET_DECISIONS_PER_SECOND = 500_000;
const TARGET_P99_MICROS = 10;

const NOW_MS = Date.UTC(2026, 10, 22, 9, 0, 0);
const OWNER = '0x1111111111111111111111111111111111111111';
const TOKEN = '0x779ded0c9e1022225f8e0630b35a9b54be713736';
const PROVIDERS = [
  'api.vendor.example',
  'data.feeds.example',
  'sec.scan.example',
  'research.example',
  'rdap.example',
];
const RECIPIENTS = [
  '0x2a2b2c2d2e2f2a2b2c2d2e2f2a2b2c2d2e2f2a2b',
  '0x3c3d3e3f3c3d3e3f3c3d3e3f3c3d3e3f3c3d3e3f',
];

// A deterministic generator, so every run benchmarks the same inputs.
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
}

function buildPolicy(): PolicySnapshot {
  const result = validatePolicy({
    owner: OWNER,
    name: 'bench',
    asset: { network: 'eip155:196', token: TOKEN, symbol: 'USDT0', decimals: 6 },
    dailyBudget: '25.00',
    perCallCap: '2.00',
    hardCap: '10.00',
    escalateAbove: '1.00',
    categories: { allow: ['market-data', 'security', 'research'], deny: ['gambling'] },
    recipients: { allow: RECIPIENTS, deny: [] },
    cooldowns: { sameServiceMinutes: 1 },
    rateLimit: { callsPerHour: 600 },
    expiresAt: '2027-12-31T00:00:00Z',
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  const rules = result.rules;
  return {
    policyId: policyIdFor(OWNER, 1n),
    version: 1,
    status: 'ACTIVE',
    policyHash: policyHash(rules),
    rules,
    expiresAt: new Date(rules.expiresAt!),
  };
}

type Kind =
  'approve' | 'escalate' | 'block-budget' | 'block-cap' | 'block-category' | 'block-duplicate';

/** 70% approve, 15% escalate, 15% block (budget, per-call cap, category, duplicate). */
function kindFor(random: number): Kind {
  if (random < 0.7) return 'approve';
  if (random < 0.85) return 'escalate';
  return (['block-budget', 'block-cap', 'block-category', 'block-duplicate'] as const)[
    Math.floor(((random - 0.85) / 0.15) * 4)
  ]!;
}

function buildInput(policy: PolicySnapshot, index: number, next: () => number): EngineInput {
  const kind = kindFor(next());
  const provider = PROVIDERS[index % PROVIDERS.length]!;
  const amountAtomic =
    kind === 'escalate'
      ? 1_000_001n + BigInt(Math.floor(next() * 900_000))
      : kind === 'block-cap'
        ? 2_500_000n
        : 10_000n + BigInt(Math.floor(next() * 900_000));
  const raw = {
    policyId: policy.policyId,
    policyHash: policy.policyHash,
    agentId: `agent-${index % 7}`,
    category: kind === 'block-category' ? 'gambling' : 'market-data',
    provider,
    capability: 'quotes.read',
    item: { description: `request ${index}`, params: { pair: 'EURUSD', n: index } },
    recipient: RECIPIENTS[index % 2],
    network: 'eip155:196',
    token: TOKEN,
    amount: amountAtomic.toString(),
    deadline: formatIsoSeconds(NOW_MS / 1000 + 600 + index),
    nonce: String(index + 1),
    endpoint: `https://${provider}/v1/quotes?pair=EURUSD&n=${index}`,
  };
  const validated = validateSpendIntent(raw, NOW_MS);
  if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
  const intent = validated.intent;
  return {
    intent,
    policy,
    window: buildWindow(intent, kind, next),
    now: NOW_MS + Math.floor(next() * 1000),
    approval: null,
  };
}

function recentOf(intent: SpendIntent, other: number, approvedAtMs: number): RecentApproval {
  return {
    intentHash: `0x${other.toString(16).padStart(64, '0')}`,
    capability: intent.capability,
    recipient: intent.recipient,
    amountAtomic: intent.amountAtomic + BigInt(other),
    itemHash: intent.itemHash,
    provider: intent.provider,
    agentId: intent.agentId,
    endpoint: intent.endpoint,
    approvedAtMs,
  };
}

function buildWindow(intent: SpendIntent, kind: Kind, next: () => number): LedgerWindow {
  const recentApproved = [
    recentOf(intent, 1, NOW_MS - 120_000),
    recentOf(intent, 2, NOW_MS - 900_000),
    recentOf(intent, 3, NOW_MS - 1_800_000),
  ];
  if (kind === 'block-duplicate') recentApproved.push(recentOf(intent, 0, NOW_MS - 30_000));
  const lastApprovedAtMsByProvider: Record<string, number> = {};
  for (const provider of PROVIDERS)
    lastApprovedAtMsByProvider[provider] = NOW_MS - 120_000 - Math.floor(next() * 600_000);
  return {
    settledTodayAtomic:
      kind === 'block-budget' ? 24_900_000n : BigInt(Math.floor(next() * 10_000_000)),
    reservedTodayAtomic: BigInt(Math.floor(next() * 2_000_000)),
    approvedCallsLastHour: Math.floor(next() * 300),
    recentApproved,
    lastApprovedAtMsByProvider,
    vendorScore: 60 + Math.floor(next() * 40),
  };
}

function percentile(sortedNs: BigUint64Array, p: number): number {
  return Number(sortedNs[Math.min(sortedNs.length - 1, Math.floor(p * sortedNs.length))]!) / 1000;
}

function main(): void {
  const policy = buildPolicy();
  const next = lcg(196);
  const pool = Array.from({ length: POOL_SIZE }, (_, i) => buildInput(policy, i, next));
  const mix = new Map<string, number>();
  for (const input of pool) {
    const decision = evaluate(input).decision;
    mix.set(decision, (mix.get(decision) ?? 0) + 1);
  }
  if (mix.has('BLOCKED_FAIL_CLOSED')) throw new Error('bench inputs are malformed');

  let sink = 0;
  for (let i = 0; i < WARMUP_DECISIONS; i += 1)
    sink += evaluate(pool[i & (POOL_SIZE - 1)]!).ruleTrace.length;

  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < THROUGHPUT_DECISIONS; i += 1)
    sink += evaluate(pool[i & (POOL_SIZE - 1)]!).ruleTrace.length;
  const elapsedNs = Number(process.hrtime.bigint() - started);
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const perSecond = THROUGHPUT_DECISIONS / (elapsedNs / 1e9);
  const perCpuSecond = THROUGHPUT_DECISIONS / cpuSeconds;

  const samples = new BigUint64Array(LATENCY_SAMPLES);
  for (let i = 0; i < LATENCY_SAMPLES; i += 1) {
    const input = pool[i & (POOL_SIZE - 1)]!;
    const t0 = process.hrtime.bigint();
    sink += evaluate(input).ruleTrace.length;
    samples[i] = process.hrtime.bigint() - t0;
  }
  samples.sort();
  const timerSamples = new BigUint64Array(100_000);
  for (let i = 0; i < timerSamples.length; i += 1) {
    const t0 = process.hrtime.bigint();
    timerSamples[i] = process.hrtime.bigint() - t0;
  }
  timerSamples.sort();

  const p50 = percentile(samples, 0.5);
  const p99 = percentile(samples, 0.99);
  const met = perSecond >= TARGET_DECISIONS_PER_SECOND && p99 < TARGET_P99_MICROS;
  const share = [...mix.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code} ${((n / POOL_SIZE) * 100).toFixed(1)}%`);
  console.log(
    `engine bench: node ${process.version}, one thread, ${POOL_SIZE} distinct inputs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`mix: ${share.join(', ')}`);
  console.log(
    `throughput: ${Math.round(perSecond).toLocaleString('en-US')} decisions/s wall, ` +
      `${Math.round(perCpuSecond).toLocaleString('en-US')} decisions per CPU second ` +
      `(${THROUGHPUT_DECISIONS.toLocaleString('en-US')} in ${(elapsedNs / 1e9).toFixed(2)} s wall, ${cpuSeconds.toFixed(2)} s CPU)`,
  );
  console.log(
    `latency per call (µs, includes ~${percentile(timerSamples, 0.5).toFixed(2)} µs timer overhead): ` +
      `p50 ${p50.toFixed(2)}, p90 ${percentile(samples, 0.9).toFixed(2)}, p99 ${p99.toFixed(2)}, p99.9 ${percentile(samples, 0.999).toFixed(2)}, max ${percentile(samples, 1).toFixed(2)}`,
  );
  console.log(
    `target ≥ ${TARGET_DECISIONS_PER_SECOND.toLocaleString('en-US')}/s and p99 < ${TARGET_P99_MICROS} µs: ${met ? 'met' : 'MISSED'} (checksum ${sink})`,
  );
}

main();
