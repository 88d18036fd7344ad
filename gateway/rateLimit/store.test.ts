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
