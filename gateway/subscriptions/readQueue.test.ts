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

test('shared reads: the same key waiting for a slot is one read; once it started, the next caller gets a read of its own', async () => {
  const queue = new ReadQueue(1, 10);
  const blocker = gate();
  const holding = queue.run(() => blocker.promise);
  let reads = 0;
  const read = (value: string) => async () => {
    reads += 1;
    return `${value} ${reads}`;
  };
  const alice = [queue.runShared('alice', read('alice')), queue.runShared('alice', read('alice'))];
  const bob = queue.runShared('bob', read('bob'));
  blocker.open();
  await holding;
  await expect(Promise.all(alice)).resolves.toEqual(['alice 1', 'alice 1']);
  await expect(bob).resolves.toBe('bob 2');
  // Started and done: the same key reads again.
  await expect(queue.runShared('alice', read('alice'))).resolves.toBe('alice 3');

  // Joined only while waiting: a caller arriving after the read started queues its own.
  const slow = gate();
  const started = queue.runShared('carol', async () => {
    await slow.promise;
    return 'carol first';
  });
  await new Promise((resolve) => setImmediate(resolve));
  const later = queue.runShared('carol', async () => 'carol second');
  slow.open();
  await expect(started).resolves.toBe('carol first');
  await expect(later).resolves.toBe('carol second');
});

test('shared reads refused with the queue full are refused to every joiner, and free the key', async () => {
  const queue = new ReadQueue(1, 1);
  const blocker = gate();
  const holding = queue.run(() => blocker.promise);
  const waiting = queue.run(async () => 'queued');
  const refused = [
    queue.runShared('dave', async () => 'never'),
    queue.runShared('dave', async () => 'never'),
  ];
  for (const joiner of refused)
    await expect(joiner).rejects.toMatchObject({ extensions: { code: 'SERVICE_UNAVAILABLE' } });
  blocker.open();
  await holding;
  await expect(waiting).resolves.toBe('queued');
  await expect(queue.runShared('dave', async () => 'read')).resolves.toBe('read');
});
