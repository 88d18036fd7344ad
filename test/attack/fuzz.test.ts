// The CI-sized fuzz run (docs/security.md): about 2,000 seeded requests generated from the route
// table and /openapi.json, split between the production stack (x402 on) and the paid-through
// stack (priced routes served), asserting for every route: an answer in time, never a 5xx, every
// refusal in the documented error body (the 402 challenge as documented), POST bodies JSON only,
// and no stack trace or secret. ATTACK_SEED replays a run; `npm run attack` is the long run.
import { failureLines, formatCampaign, runCampaign } from './campaign';
import { type AttackStacks, startAttackStacks } from './world';

const SEED = Number(process.env.ATTACK_SEED ?? 20_261_124);
const RUNS_PER_STACK = 1_000;
const TIMEOUT_MS = 10_000;

let attacked: AttackStacks;

beforeAll(async () => {
  attacked = await startAttackStacks(SEED);
}, 60_000);

afterAll(async () => {
  await attacked?.stop();
});

test('the attack surface is the route table, as /openapi.json publishes it, plus the edge endpoints', () => {
  const production = attacked.stacks[0];
  const rest = production.targets.filter((target) => target.kind === 'rest');
  expect(rest.length).toBeGreaterThan(20);
  // The recording probe found what each route reads: the fuzz fills these fields first.
  expect(rest.find((target) => target.path === '/preflight_payment')).toMatchObject({
    priced: true,
    bodyFields: ['intent', 'intentHash', 'policyId'],
  });
  expect(rest.find((target) => target.path === '/consumer/policy')).toMatchObject({
    queryFields: ['policyId'],
  });
  expect(rest.find((target) => target.path === '/receipt_status/:receiptId')).toMatchObject({
    params: ['receiptId'],
  });
});

test.each([
  ['production', 0],
  ['paid-through', 1],
] as const)(
  `%s stack, ${RUNS_PER_STACK} requests: no 5xx, hang, off-shape answer, non-JSON body served or leak`,
  async (name, offset) => {
    const target = attacked.stacks.find((stack) => stack.name === name)!;
    const result = await runCampaign(
      name,
      target.stack.url,
      target.targets,
      target.world,
      target.verdict,
      {
        runs: RUNS_PER_STACK,
        seed: SEED + offset,
        timeoutMs: TIMEOUT_MS,
      },
    );
    console.log(formatCampaign(result));
    expect(result.runs).toBe(RUNS_PER_STACK);
    expect(failureLines(result)).toEqual([]);
  },
  180_000,
);
