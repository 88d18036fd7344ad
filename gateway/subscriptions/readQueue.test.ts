// The subscription read queue on its own: never more reads at once than its concurrency, never
// more waiting than its bound (the next one fails at once with SERVICE_UNAVAILABLE), first come
// first served, and a failed read frees its slot like any other.
import { ReadQueue } from './readQueue';

function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

test('runs at most `concurrency` reads, queues up to the bound in order, and refuses the rest at once', async () => {
  const queue = new ReadQueue(2, 3);
  const gates = Array.from({ length: 5 }, gate);
  const started: number[] = [];
  const reads = gates.map((g, index) =>
    queue.run(async () => {
      started.push(index);
      await g.promise;
      return index;
    }),
  );
  await expect(queue.run(async () => 'too many')).rejects.toMatchObject({
    extensions: { code: 'SERVICE_UNAVAILABLE', retryable: true },
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual([0, 1]);
  gates[1].open();
  await reads[1];
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual([0, 1, 2]);
  for (const g of gates) g.open();
  await expect(Promise.all(reads)).resolves.toEqual([0, 1, 2, 3, 4]);
  expect(started).toEqual([0, 1, 2, 3, 4]);
});

test('a read that fails passes its error on and frees its slot', async () => {
  const queue = new ReadQueue(1, 1);
  await expect(
    queue.run(async () => Promise.reject(new Error('database went away'))),
  ).rejects.toThrow('database went away');
  await expect(queue.run(async () => 'next')).resolves.toBe('next');
});

test('notification reads wait their turn in the same slots however full the queue is, and are never refused', async () => {
  const queue = new ReadQueue(1, 0);
  const first = gate();
  const started: string[] = [];
  const running = queue.run(async () => {
    started.push('snapshot');
    await first.promise;
  });
  await expect(queue.run(async () => 'refused')).rejects.toMatchObject({
    extensions: { code: 'SERVICE_UNAVAILABLE' },
  });
  const inTurn = [1, 2].map((index) =>
    queue.runInTurn(async () => {
      started.push(`notification ${index}`);
      return index;
    }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual(['snapshot']);
  first.open();
  await running;
  await expect(Promise.all(inTurn)).resolves.toEqual([1, 2]);
  expect(started).toEqual(['snapshot', 'notification 1', 'notification 2']);
});
