// `npm run bench:whatif`: the policy what-if replay (core/whatif) over 100,000 past decisions of
// one generated policy history (about 35 days, escalations, owner approvals, purchases, releases,
// expiries, 30 % stored without inputs), twice: the current policy itself and a draft with a lower
// daily budget and one more category. Target: 100,000 decisions replayed in at most 2 s.
import { loadavg } from 'node:os';
import {
  NOW_MS,
  policyDocument,
  rulesOf,
  snapshotOf,
  spendIntent,
} from '../core/test-support/spend-fixtures';
import { generateHistory } from '../core/test-support/whatif-history';
import { replayPolicy } from '../core/whatif/replay';

const DECISIONS = 100_000;
const TARGET_SECONDS = 2;

function main(): void {
  const document = policyDocument({
    dailyBudget: '40.00',
    perCallCap: '2.00',
    onPerCallCapExceeded: 'ESCALATE',
    hardCap: '3.00',
    escalateAbove: '1.00',
    categories: { allow: ['market-data', 'research'], deny: [] },
    duplicates: { windowMinutes: 30, keys: ['itemHash', 'amount'] },
    cooldowns: { sameServiceMinutes: 1 },
    rateLimit: { callsPerHour: 200 },
    maxDeadlineMinutes: 180,
  });
  const policy = snapshotOf(rulesOf(document));
  const history = generateHistory(policy, spendIntent(policy), {
    seed: 2026,
    decisions: DECISIONS,
    startMs: NOW_MS - 40 * 86_400_000,
    meanGapSeconds: 30,
    categories: ['market-data', 'research', 'gambling'],
    amounts: [200_000n, 700_000n, 1_000_000n, 1_500_000n, 2_500_000n],
    withoutInputs: 0.3,
  });
  const draft = rulesOf({
    ...document,
    dailyBudget: '25.00',
    categories: { allow: ['market-data', 'research', 'gambling'], deny: [] },
  });
  // One warm-up pass, then the measured passes.
  replayPolicy({ policyId: policy.policyId, draft: policy.rules, history: history.slice(0, 5000) });
  console.log(
    `what-if bench: node ${process.version}, one thread, ${DECISIONS.toLocaleString('en-US')} past decisions over ${Math.round((history.at(-1)!.decidedAtMs - history[0]!.decidedAtMs) / 86_400_000)} days, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  let worst = 0;
  for (const [name, rules] of [
    ['current policy', policy.rules],
    ['draft (lower budget, one more category)', draft],
  ] as const) {
    const t0 = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    const result = replayPolicy({ policyId: policy.policyId, draft: rules, history });
    const cpu = process.cpuUsage(cpu0);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    worst = Math.max(worst, seconds);
    const changed = result.decisions.length;
    console.log(
      `${name}: ${seconds.toFixed(3)} s wall, ${cpuSeconds.toFixed(3)} s CPU (${Math.round(DECISIONS / seconds).toLocaleString('en-US')} decisions/s), ` +
        `${changed.toLocaleString('en-US')} changed, approved ${result.before.approved} → ${result.after.approved}, ` +
        `spend ${result.before.spendAtomic} → ${result.after.spendAtomic}, ${result.rebuiltInputs.length.toLocaleString('en-US')} intents with rebuilt inputs`,
    );
  }
  console.log(
    `target ≤ ${TARGET_SECONDS} s for ${DECISIONS.toLocaleString('en-US')} decisions: ${worst <= TARGET_SECONDS ? 'met' : 'MISSED'} (slowest pass ${worst.toFixed(3)} s)`,
  );
}

main();
