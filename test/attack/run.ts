// `npm run attack -- --runs 20000 [--seed N] [--timeout-ms 10000]`: the long fuzz run outside
// jest. Starts the devnet and both attacked stacks on DATABASE_URL (or an embedded PostgreSQL when
// it is unset), splits the runs between them, prints counts by status and every failure class,
// and exits 1 on any 5xx, hang, missing answer, off-shape body or leak.
import 'reflect-metadata';
import globalSetup from '../global-setup';
import globalTeardown from '../global-teardown';
import { formatCampaign, runCampaign, type CampaignResult } from './campaign';
import { startAttackStacks } from './world';

interface RunArguments {
  runs: number;
  seed: number;
  timeoutMs: number;
}

function parseArguments(argv: readonly string[]): RunArguments {
  const parsed: RunArguments = { runs: 20_000, seed: Date.now() % 2 ** 31, timeoutMs: 10_000 };
  for (let index = 0; index < argv.length; index += 2) {
    const [flag, value] = [argv[index], Number(argv[index + 1])];
    if (!Number.isSafeInteger(value) || value < 0)
      throw new Error(`${flag} needs a whole number, got ${argv[index + 1]}`);
    if (flag === '--runs') parsed.runs = value;
    else if (flag === '--seed') parsed.seed = value;
    else if (flag === '--timeout-ms') parsed.timeoutMs = value;
    else throw new Error(`unknown flag ${flag} (use --runs, --seed, --timeout-ms)`);
  }
  return parsed;
}

async function main(): Promise<number> {
  const options = parseArguments(process.argv.slice(2));
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  console.log(
    `[attack] seed ${options.seed}, ${options.runs} requests, timeout ${options.timeoutMs} ms (replay: --seed ${options.seed})`,
  );
  await globalSetup();
  try {
    const attacked = await startAttackStacks(options.seed);
    const results: CampaignResult[] = [];
    try {
      for (const [index, target] of attacked.stacks.entries()) {
        const runs = Math.ceil(options.runs / attacked.stacks.length);
        const result = await runCampaign(
          target.name,
          target.stack.url,
          target.targets,
          target.world,
          target.verdict,
          {
            runs,
            seed: options.seed + index,
            timeoutMs: options.timeoutMs,
          },
        );
        console.log(formatCampaign(result, { perTarget: true }));
        results.push(result);
      }
    } finally {
      await attacked.stop();
    }
    const failing = results.reduce((sum, result) => sum + result.failures.length, 0);
    console.log(
      failing === 0 ? '[attack] PASS: no failures' : `[attack] FAIL: ${failing} failure classes`,
    );
    return failing === 0 ? 0 : 1;
  } finally {
    await globalTeardown();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
