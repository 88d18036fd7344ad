// The shared store against the pure maths: gateway.take_rate_tokens gives the same answers as
// takeToken for any sequence, holds its bound under concurrent checks, and the sweep only forgets
// buckets that are full again. Real PostgreSQL.
import fc from 'fast-check';
import { createPool } from '../../platform/db/pool';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { type BucketLevel, type BucketLimit, capacityUnits, takeTokens } from './bucket';
import { MemoryRateLimitStore, PostgresRateLimitStore, type RateLimitStore } from './store';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: ['gateway'] });
});

afterAll(async () => {
  await db?.drop();
});

async function takeAt(
  keys: string[],
  limits: BucketLimit[],
  nowMs: number,
  count = 1,
): Promise<{ granted: number; waitMs: number }> {
  const result = await db.pool.query<{ granted: number; wait_ms: string }>(
    'SELECT granted, wait_ms FROM gateway.take_rate_tokens($1::text[], $2::bigint[], $3::bigint[], $4, $5)',
    [keys, limits.map(capacityUnits), limits.map((limit) => limit.perMinute), count, nowMs],
  );
  return { granted: result.rows[0]!.granted, waitMs: Number(result.rows[0]!.wait_ms) };
}

const limitArb = fc.record({
  perMinute: fc.integer({ min: 1, max: 1_000_000 }),
  burst: fc.integer({ min: 1, max: 20 }),
});

describe('gateway.take_rate_tokens', () => {
  let run = 0;

  it('answers exactly as the pure maths for any sequence of checks and batches (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(limitArb, { minLength: 3, maxLength: 3 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: -50, max: 4_000 }),
            charged: fc.subarray([0, 1, 2], { minLength: 1 }),
            count: fc.integer({ min: 1, max: 25 }),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        async (limits, requests) => {
          run += 1;
          const keys = limits.map((_, index) => `test:${run}:${index}`);
          const levels: Array<BucketLevel | undefined> = limits.map(() => undefined);
          let now = 1_800_000_000_000;
          for (const request of requests) {
            now += request.gap;
            const expected = takeTokens(
              request.charged.map((index) => ({ limit: limits[index]!, level: levels[index] })),
              request.count,
              now,
            );
            if (expected.granted > 0)
              request.charged.forEach(
                (index, position) => (levels[index] = expected.levels[position]),
              );
            const answer = await takeAt(
              request.charged.map((index) => keys[index]!),
              request.charged.map((index) => limits[index]!),
              now,
              request.count,
            );
            expect(answer).toEqual({ granted: expected.granted, waitMs: expected.retryAfterMs });
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('a refused check leaves a missing bucket without a time: a take at an earlier now refills from that now', async () => {
    // The property's counterexample (seed -1554268925), written out: the calls' nows need not
    // increase (concurrent calls read the clock before they queue on the row lock).
    const t = 1_800_000_000_000;
    const one = { perMinute: 1, burst: 1 };
    const two = { perMinute: 1, burst: 2 };
    const [a, b, c] = ['untimed:a', 'untimed:b', 'untimed:c'];
    expect(await takeAt([b, c], [one, two], t)).toEqual({ granted: 1, waitMs: 0 });
    // Refused for b; a is missing and must stay as absent (full, with no time of its own).
    expect(await takeAt([a, b, c], [one, one, two], t + 1)).toEqual({ granted: 0, waitMs: 59_999 });
    expect(await takeAt([a, c], [one, two], t)).toEqual({ granted: 1, waitMs: 0 });
    // a and c were emptied at t: one millisecond of refill each, as the maths has it.
    const expected = takeTokens(
      [
        { limit: one, level: { units: 0, atMs: t } },
        { limit: two, level: { units: 0, atMs: t } },
      ],
      1,
      t + 1,
    );
    expect(expected).toMatchObject({ granted: 0, retryAfterMs: 59_999 });
    expect(await takeAt([a, c], [one, two], t + 1)).toEqual({
      granted: expected.granted,
      waitMs: expected.retryAfterMs,
    });
  });

  it('refuses an empty or repeated bucket list', async () => {
    await expect(takeAt([], [], 0)).rejects.toThrow(/distinct buckets/);
    await expect(
      takeAt(
        ['dup', 'dup'],
        [
          { perMinute: 1, burst: 1 },
          { perMinute: 1, burst: 1 },
        ],
        0,
      ),
    ).rejects.toThrow(/distinct buckets/);
    await expect(takeAt(['zero'], [{ perMinute: 1, burst: 1 }], 0, 0)).rejects.toThrow(
      /count of at least 1/,
    );
  });

  it('sweeps only the buckets that are full again', async () => {
    const limit = { perMinute: 60, burst: 2 };
    await takeAt(['sweep:used'], [limit], 10_000);
    await takeAt(['sweep:rested'], [limit], 0);
    const swept = await db.pool.query<{ n: number }>(
      'SELECT gateway.sweep_rate_buckets($1) AS n',
      [10_500],
    );
    expect(swept.rows[0]!.n).toBeGreaterThanOrEqual(1);
    const left = await db.pool.query<{ bucket: string }>(
      "SELECT bucket FROM gateway.rate_buckets WHERE bucket LIKE 'sweep:%'",
    );
    expect(left.rows.map((row) => row.bucket)).toEqual(['sweep:used']);
  });
});

/** gateway.take_rate_tokens_each at `nowMs`: each check's wait (0 when admitted), in order. */
async function takeEachAt(
  checks: Array<Array<{ key: string; limit: BucketLimit }>>,
  nowMs: number,
): Promise<number[]> {
  const pairs = checks.flatMap((charges, index) =>
    charges.map((charge) => ({ ...charge, no: index + 1 })),
  );
  const result = await db.pool.query<{ check_no: number; granted: boolean; wait_ms: string }>(
    'SELECT check_no, granted, wait_ms FROM gateway.take_rate_tokens_each($1::integer[], $2::text[], $3::bigint[], $4::bigint[], $5)',
    [
      pairs.map((pair) => pair.no),
      pairs.map((pair) => pair.key),
      pairs.map((pair) => capacityUnits(pair.limit)),
      pairs.map((pair) => pair.limit.perMinute),
      nowMs,
    ],
  );
  expect(result.rows.map((row) => row.check_no)).toEqual(checks.map((_, index) => index + 1));
  return result.rows.map((row) => (row.granted ? 0 : Number(row.wait_ms)));
}

describe('gateway.take_rate_tokens_each', () => {
  let run = 0;

  it('answers each check of a batch exactly as the pure maths taking them one by one, batch after batch (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(limitArb, { minLength: 4, maxLength: 4 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: -50, max: 4_000 }),
            checks: fc.array(fc.subarray([0, 1, 2, 3], { minLength: 1 }), {
              minLength: 1,
              maxLength: 12,
            }),
          }),
          { minLength: 1, maxLength: 15 },
        ),
        async (limits, batches) => {
          run += 1;
          const keys = limits.map((_, index) => `each:${run}:${index}`);
          const levels: Array<BucketLevel | undefined> = limits.map(() => undefined);
          let now = 1_800_000_000_000;
          for (const batch of batches) {
            now += batch.gap;
            const expected = batch.checks.map((charged) => {
              const outcome = takeTokens(
                charged.map((index) => ({ limit: limits[index]!, level: levels[index] })),
                1,
                now,
              );
              if (outcome.granted > 0)
                charged.forEach((index, position) => (levels[index] = outcome.levels[position]));
              return outcome.granted > 0 ? 0 : outcome.retryAfterMs;
            });
            const answer = await takeEachAt(
              batch.checks.map((charged) =>
                charged.map((index) => ({ key: keys[index]!, limit: limits[index]! })),
              ),
              now,
            );
            expect(answer).toEqual(expected);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('a bucket a refused check named first is full at the limits of the next check that reads it', async () => {
    const t = 1_800_000_000_000;
    const one = { perMinute: 1, burst: 1 };
    const three = { perMinute: 1, burst: 3 };
    expect(await takeEachAt([[{ key: 'wider:y', limit: one }]], t)).toEqual([0]);
    const waits = await takeEachAt(
      [
        // Refused for y (empty): x, missing, is not taken from and keeps no limits of this check.
        [
          { key: 'wider:x', limit: one },
          { key: 'wider:y', limit: one },
        ],
        [{ key: 'wider:x', limit: three }],
        [{ key: 'wider:x', limit: three }],
        [{ key: 'wider:x', limit: three }],
        [{ key: 'wider:x', limit: three }],
      ],
      t,
    );
    // x is absent to the maths, so full at three tokens: three admitted, then a minute's wait.
    expect(waits).toEqual([60_000, 0, 0, 0, 60_000]);
  });

  it('refuses empty input, a bucket twice in one check, and checks out of order', async () => {
    const limit = { perMinute: 1, burst: 1 };
    const call = (checks: number[], buckets: string[]) =>
      db.pool.query(
        'SELECT * FROM gateway.take_rate_tokens_each($1::integer[], $2::text[], $3::bigint[], $4::bigint[])',
        [
          checks,
          buckets,
          buckets.map(() => capacityUnits(limit)),
          buckets.map(() => limit.perMinute),
        ],
      );
    await expect(call([], [])).rejects.toThrow(/numbered 1..n/);
    await expect(call([1, 1], ['dup', 'dup'])).rejects.toThrow(/distinct buckets/);
    await expect(call([2], ['a'])).rejects.toThrow(/numbered 1..n/);
    await expect(call([1, 3], ['a', 'b'])).rejects.toThrow(/numbered 1..n/);
    await expect(call([1, 2, 1], ['a', 'b', 'c'])).rejects.toThrow(/numbered 1..n/);
    // The same bucket in two checks is how a batch shares a bucket: allowed.
    await expect(call([1, 2], ['shared', 'shared'])).resolves.toMatchObject({ rowCount: 2 });
  });
});

describe('the PostgreSQL store', () => {
  it('sends checks that arrive while a call is in flight in one call, whatever their buckets', async () => {
    const store = new PostgresRateLimitStore(db.pool, false, () => undefined);
    try {
      const limit = { perMinute: 1, burst: 40 };
      const waits = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          store.take([
            { key: `payer:${index}`, limit: { perMinute: 1, burst: 5 } },
            { key: 'paid-ip:shared', limit },
          ]),
        ),
      );
      // The first goes at once; the 49 that arrive meanwhile go together in the next call.
      expect(store.stats).toEqual({ calls: 2, checks: 50 });
      // The shared bucket admits its burst, in arrival order.
      expect(waits.slice(0, 40).every((wait) => wait === 0)).toBe(true);
      expect(waits.slice(40).every((wait) => wait > 0)).toBe(true);
    } finally {
      await store.close();
    }
  });
});

describe.each([
  ['PostgreSQL', () => new PostgresRateLimitStore(db.pool, false, () => undefined)],
  ['memory', () => new MemoryRateLimitStore()],
] as Array<[string, () => RateLimitStore]>)(
  'the %s store under concurrent checks',
  (name, open) => {
    it('admits exactly the burst of 200 simultaneous checks on one bucket', async () => {
      const store = open();
      try {
        const limit = { perMinute: 1, burst: 50 };
        const started = Date.now();
        const waits = await Promise.all(
          Array.from({ length: 200 }, () =>
            store.take([
              { key: `burst:${name}`, limit },
              { key: `wide:${name}`, limit: { perMinute: 1, burst: 1_000 } },
            ]),
          ),
        );
        const admitted = waits.filter((wait) => wait === 0).length;
        expect(admitted).toBe(50 + Math.floor((Date.now() - started) / 60_000));
        // One token a minute: a refused check waits at most a minute for the next one.
        for (const wait of waits.filter((value) => value !== 0))
          expect(wait > 0 && wait <= 60_000).toBe(true);
      } finally {
        await store.close();
      }
    });
  },
);

describe('two gateways on one database', () => {
  it('share their buckets: two stores on their own pools admit one burst between them', async () => {
    const first = new PostgresRateLimitStore(createPool(db.url, { max: 4 }), true, () => undefined);
    const second = new PostgresRateLimitStore(
      createPool(db.url, { max: 4 }),
      true,
      () => undefined,
    );
    try {
      const limit = { perMinute: 1, burst: 30 };
      const started = Date.now();
      const waits = await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          (index % 2 === 0 ? first : second).take([{ key: 'replicas', limit }]),
        ),
      );
      expect(waits.filter((wait) => wait === 0)).toHaveLength(
        30 + Math.floor((Date.now() - started) / 60_000),
      );
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('the memory store', () => {
  it('forgets a bucket only once it is full again', async () => {
    let now = 0;
    const store = new MemoryRateLimitStore(() => now);
    try {
      const limit = { perMinute: 60, burst: 2 };
      expect(await store.take([{ key: 'a', limit }])).toBe(0);
      expect(await store.take([{ key: 'a', limit }])).toBe(0);
      expect(await store.take([{ key: 'a', limit }])).toBe(1_000);
      now = 1_999;
      expect(store.sweep()).toBe(1);
      now = 2_000;
      expect(store.sweep()).toBe(0);
      expect(await store.take([{ key: 'a', limit }])).toBe(0);
    } finally {
      await store.close();
    }
  });
});
