// The group-commit queue on its own, with a batch runner the test controls: batches form from what
// waits, never hold a key twice, never run a key twice at once, keep each key's arrival order,
// retry alone only what never committed, and hand an unknown outcome to every request of its batch.
import fc from 'fast-check';
import { BatchNotCommitted, KeyedBatchQueue, type Settled } from './batchQueue';

interface Request {
  key: string;
  id: number;
}

const keyOf = (request: Request) => request.key;

/** A runner whose batches finish when the test says so. */
function controlledRunner() {
  const batches: Array<{ requests: Request[]; finish: (outcome?: Error) => void }> = [];
  const run = (requests: readonly Request[]) =>
    new Promise<Array<Settled<number>>>((resolve, reject) => {
      batches.push({
        requests: [...requests],
        finish: (outcome) =>
          outcome
            ? reject(outcome)
            : resolve(requests.map((request) => ({ ok: true, value: request.id }))),
      });
    });
  return { batches, run };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedBatchQueue', () => {
  it('runs the first request at once and batches what arrives while it runs', async () => {
    const { batches, run } = controlledRunner();
    const queue = new KeyedBatchQueue(run, { maxItems: 10, maxInFlight: 1 }, keyOf);
    const answers = [1, 2, 3, 4].map((id) => queue.submit({ key: `p${id}`, id }));
    expect(batches.map((batch) => batch.requests.map((request) => request.id))).toEqual([[1]]);
    batches[0]!.finish();
    await tick();
    expect(batches.map((batch) => batch.requests.map((request) => request.id))).toEqual([
      [1],
      [2, 3, 4],
    ]);
    batches[1]!.finish();
    await expect(Promise.all(answers)).resolves.toEqual([1, 2, 3, 4]);
    expect(queue.stats).toEqual({ batches: 2, requests: 4, retriedAlone: 0 });
  });

  it('never puts one key twice in a batch nor in two batches at once, and keeps its order', async () => {
    const { batches, run } = controlledRunner();
    const queue = new KeyedBatchQueue(run, { maxItems: 10, maxInFlight: 3 }, keyOf);
    const answers = [
      queue.submit({ key: 'hot', id: 1 }),
      queue.submit({ key: 'hot', id: 2 }),
      queue.submit({ key: 'cold', id: 3 }),
      queue.submit({ key: 'hot', id: 4 }),
    ];
    // hot#1 runs alone at once; hot#2 waits for it even though batches are free; cold joins the next batch.
    expect(batches.map((batch) => batch.requests.map((request) => request.id))).toEqual([[1], [3]]);
    batches[0]!.finish();
    await tick();
    expect(batches.map((batch) => batch.requests.map((request) => request.id))).toEqual([
      [1],
      [3],
      [2],
    ]);
    batches[2]!.finish();
    await tick();
    expect(batches.map((batch) => batch.requests.map((request) => request.id))).toEqual([
      [1],
      [3],
      [2],
      [4],
    ]);
    batches[1]!.finish();
    batches[3]!.finish();
    await expect(Promise.all(answers)).resolves.toEqual([1, 2, 3, 4]);
  });

  it('takes up to maxPerKey requests of one key into a batch, in arrival order', async () => {
    const { batches, run } = controlledRunner();
    const queue = new KeyedBatchQueue(run, { maxItems: 10, maxInFlight: 1, maxPerKey: 2 }, keyOf);
    const answers = [
      queue.submit({ key: 'first', id: 0 }),
      ...[1, 2, 3].map((id) => queue.submit({ key: 'hot', id })),
      queue.submit({ key: 'cold', id: 4 }),
    ];
    batches[0]!.finish();
    await tick();
    expect(batches[1]!.requests.map((request) => request.id)).toEqual([1, 2, 4]);
    batches[1]!.finish();
    await tick();
    expect(batches[2]!.requests.map((request) => request.id)).toEqual([3]);
    batches[2]!.finish();
    await expect(Promise.all(answers)).resolves.toEqual([0, 1, 2, 3, 4]);
  });

  it("retries a key's requests one after the other, in order, when their batch rolled back", async () => {
    const runs: number[][] = [];
    let running = 0;
    let overlapped = false;
    const queue = new KeyedBatchQueue<Request, number>(
      async (requests) => {
        running += 1;
        if (running > 1 && requests.some((request) => request.key === 'hot')) overlapped = true;
        runs.push(requests.map((request) => request.id));
        await tick();
        running -= 1;
        if (requests.length > 1) throw new BatchNotCommitted(new Error('deadlock detected'));
        return requests.map((request) => ({ ok: true as const, value: request.id }));
      },
      { maxItems: 10, maxInFlight: 1, maxPerKey: 3 },
      keyOf,
    );
    const blocker = queue.submit({ key: 'x', id: 0 });
    const answers = [1, 2, 3].map((id) => queue.submit({ key: 'hot', id }));
    await blocker;
    await expect(Promise.all(answers)).resolves.toEqual([1, 2, 3]);
    expect(runs).toEqual([[0], [1, 2, 3], [1], [2], [3]]);
    expect(overlapped).toBe(false);
  });

  it('caps a batch at maxItems', async () => {
    const { batches, run } = controlledRunner();
    const queue = new KeyedBatchQueue(run, { maxItems: 2, maxInFlight: 1 }, keyOf);
    const answers = [1, 2, 3, 4, 5].map((id) => queue.submit({ key: `p${id}`, id }));
    for (let index = 0; index < 3; index += 1) {
      batches[index]!.finish();
      await tick();
    }
    expect(batches.map((batch) => batch.requests.length)).toEqual([1, 2, 2]);
    await expect(Promise.all(answers)).resolves.toEqual([1, 2, 3, 4, 5]);
  });

  it('runs each request of a batch that did not commit again alone, so one bad request fails alone', async () => {
    const runs: number[][] = [];
    const queue = new KeyedBatchQueue<Request, number>(
      async (requests) => {
        runs.push(requests.map((request) => request.id));
        if (requests.some((request) => request.id === 2))
          throw new BatchNotCommitted(Object.assign(new Error('duplicate key'), { code: '23505' }));
        return requests.map((request) => ({ ok: true as const, value: request.id * 10 }));
      },
      { maxItems: 10, maxInFlight: 1 },
      keyOf,
    );
    const blocker = queue.submit({ key: 'a', id: 0 });
    const answers = [1, 2, 3].map((id) =>
      queue.submit({ key: `k${id}`, id }).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
    );
    await blocker;
    const settled = await Promise.all(answers);
    expect(runs).toEqual([[0], [1, 2, 3], [1], [2], [3]]);
    expect(settled).toEqual([
      { value: 10 },
      { error: expect.objectContaining({ code: '23505' }) },
      { value: 30 },
    ]);
    expect(queue.stats.retriedAlone).toBe(3);
  });

  it('gives an outcome-unknown failure to every request of the batch and never runs them again', async () => {
    let calls = 0;
    const lost = new Error('Connection terminated unexpectedly');
    const queue = new KeyedBatchQueue<Request, number>(
      async () => {
        calls += 1;
        throw lost;
      },
      { maxItems: 10, maxInFlight: 1 },
      keyOf,
    );
    const first = queue.submit({ key: 'a', id: 1 });
    const rest = [queue.submit({ key: 'b', id: 2 }), queue.submit({ key: 'c', id: 3 })];
    await expect(first).rejects.toBe(lost);
    for (const answer of rest) await expect(answer).rejects.toBe(lost);
    expect(calls).toBe(2);
  });

  it('hands each request its own settled outcome', async () => {
    const queue = new KeyedBatchQueue<Request, number>(
      async (requests) =>
        requests.map((request) =>
          request.id % 2 === 0
            ? { ok: true as const, value: request.id }
            : { ok: false as const, error: new Error(`odd ${request.id}`) },
        ),
      { maxItems: 10, maxInFlight: 1 },
      keyOf,
    );
    const answers = [1, 2, 3, 4].map((id) =>
      queue.submit({ key: `k${id}`, id }).then(
        (value) => value,
        (error: Error) => error.message,
      ),
    );
    await expect(Promise.all(answers)).resolves.toEqual(['odd 1', 2, 'odd 3', 4]);
  });

  it('opens a spare slot only once the running batch has run spareAfterMs: a quick batch takes what waits, a stuck one does not hold others up', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { batches, run } = controlledRunner();
      const queue = new KeyedBatchQueue(
        run,
        { maxItems: 10, maxInFlight: 2, spareAfterMs: 20 },
        keyOf,
      );
      const ids = () => batches.map((batch) => batch.requests.map((request) => request.id));
      const answers = [
        queue.submit({ key: 'a', id: 1 }),
        queue.submit({ key: 'b', id: 2 }),
        queue.submit({ key: 'c', id: 3 }),
      ];
      expect(ids()).toEqual([[1]]); // a slot is free, but the running batch is younger than 20 ms
      batches[0]!.finish();
      await tick();
      expect(ids()).toEqual([[1], [2, 3]]); // finished in time: what waited went into one batch
      answers.push(queue.submit({ key: 'd', id: 4 }));
      jest.advanceTimersByTime(19);
      expect(ids()).toEqual([[1], [2, 3]]);
      jest.advanceTimersByTime(1);
      expect(ids()).toEqual([[1], [2, 3], [4]]); // batch [2, 3] is stuck: after 20 ms the spare slot opens
      answers.push(queue.submit({ key: 'e', id: 5 }));
      jest.advanceTimersByTime(1_000);
      expect(ids()).toEqual([[1], [2, 3], [4]]); // both slots busy: maxInFlight still holds
      batches[1]!.finish();
      batches[2]!.finish();
      await tick();
      batches[3]!.finish();
      await expect(Promise.all(answers)).resolves.toEqual([1, 2, 3, 4, 5]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('refuses nonsense options', () => {
    const run = async () => [];
    expect(() => new KeyedBatchQueue(run, { maxItems: 0, maxInFlight: 1 }, keyOf)).toThrow(
      'maxItems',
    );
    expect(() => new KeyedBatchQueue(run, { maxItems: 1, maxInFlight: 1.5 }, keyOf)).toThrow(
      'maxInFlight',
    );
    expect(
      () => new KeyedBatchQueue(run, { maxItems: 1, maxInFlight: 1, maxPerKey: 0 }, keyOf),
    ).toThrow('maxPerKey');
    expect(
      () => new KeyedBatchQueue(run, { maxItems: 1, maxInFlight: 2, spareAfterMs: -1 }, keyOf),
    ).toThrow('spareAfterMs');
  });

  it('property: every request is answered once, keys never overlap in flight, batches respect their caps, each key keeps its order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        async (keys, maxItems, maxInFlight, maxPerKey) => {
          const inFlight = new Set<string>();
          const order = new Map<string, number[]>();
          let overlap = false;
          const queue = new KeyedBatchQueue<Request, number>(
            async (requests) => {
              const batchKeys = requests.map((request) => request.key);
              const perKey = new Map<string, number>();
              for (const key of batchKeys) perKey.set(key, (perKey.get(key) ?? 0) + 1);
              if (
                Math.max(...perKey.values()) > maxPerKey ||
                batchKeys.some((key) => inFlight.has(key)) ||
                requests.length > maxItems
              )
                overlap = true;
              // Within a batch, each key's requests come in arrival order.
              for (const key of perKey.keys()) {
                const ids = requests
                  .filter((request) => request.key === key)
                  .map((request) => request.id);
                if (ids.some((id, index) => index > 0 && id < ids[index - 1]!)) overlap = true;
              }
              for (const key of batchKeys) inFlight.add(key);
              await tick();
              for (const request of requests) {
                order.set(request.key, [...(order.get(request.key) ?? []), request.id]);
                inFlight.delete(request.key);
              }
              return requests.map((request) => ({ ok: true as const, value: request.id }));
            },
            { maxItems, maxInFlight, maxPerKey },
            keyOf,
          );
          const answers = await Promise.all(
            keys.map((key, id) => queue.submit({ key: `k${key}`, id })),
          );
          expect(answers).toEqual(keys.map((_key, id) => id));
          expect(overlap).toBe(false);
          for (const ids of order.values()) expect(ids).toEqual([...ids].sort((a, b) => a - b));
        },
      ),
      { numRuns: 200 },
    );
  });
});
