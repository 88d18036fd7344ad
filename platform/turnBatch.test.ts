import { TurnBatch, TurnBatches } from './turnBatch';

function recorder(options: { failTogether?: boolean; maxSize?: number } = {}) {
  const calls: Array<{ kind: 'alone' | 'together'; items: number[] }> = [];
  const batch = new TurnBatch<number, string>({
    alone: async (item) => {
      calls.push({ kind: 'alone', items: [item] });
      if (item < 0) throw new Error(`bad ${item}`);
      return `one ${item}`;
    },
    together: async (items) => {
      calls.push({ kind: 'together', items: [...items] });
      if (options.failTogether || items.some((item) => item < 0)) throw new Error('refused whole');
      return items.map((item) => `many ${item}`);
    },
    maxSize: options.maxSize ?? 10,
  });
  return { batch, calls };
}

describe('TurnBatch', () => {
  it('a call alone in its turn runs alone', async () => {
    const { batch, calls } = recorder();
    expect(await batch.add(1)).toBe('one 1');
    expect(calls).toEqual([{ kind: 'alone', items: [1] }]);
  });

  it('calls of one turn go together, in order, and the next turn starts a new batch', async () => {
    const { batch, calls } = recorder();
    expect(await Promise.all([batch.add(1), batch.add(2), batch.add(3)])).toEqual([
      'many 1',
      'many 2',
      'many 3',
    ]);
    expect(await Promise.all([batch.add(4), batch.add(5)])).toEqual(['many 4', 'many 5']);
    expect(calls).toEqual([
      { kind: 'together', items: [1, 2, 3] },
      { kind: 'together', items: [4, 5] },
    ]);
    expect(batch.stats).toMatchObject({ together: 2, carried: 5, alone: 0, retriedAlone: 0 });
  });

  it('a batch refused whole is retried one by one: each call gets its own answer or error', async () => {
    const { batch, calls } = recorder();
    const outcomes = await Promise.allSettled([batch.add(1), batch.add(-2), batch.add(3)]);
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'one 1' },
      { status: 'rejected', reason: new Error('bad -2') },
      { status: 'fulfilled', value: 'one 3' },
    ]);
    expect(calls[0]).toEqual({ kind: 'together', items: [1, -2, 3] });
    expect(
      calls
        .slice(1)
        .map((call) => call.items[0])
        .sort(),
    ).toEqual([-2, 1, 3]);
    expect(batch.stats.retriedAlone).toBe(3);
  });

  it('splits a turn larger than maxSize into batches of at most maxSize', async () => {
    const { batch, calls } = recorder({ maxSize: 2 });
    const answers = await Promise.all([1, 2, 3, 4, 5].map((item) => batch.add(item)));
    expect(answers).toEqual(['many 1', 'many 2', 'many 3', 'many 4', 'one 5']);
    expect(calls.map((call) => call.items)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('a batch that answers the wrong number of items is retried one by one', async () => {
    const batch = new TurnBatch<number, number>({
      alone: async (item) => item * 10,
      together: async (items) => items.slice(1),
      maxSize: 10,
    });
    expect(await Promise.all([batch.add(1), batch.add(2)])).toEqual([10, 20]);
  });
});

describe('TurnBatches', () => {
  it('batches calls per key: the same turn on two keys makes two batches', async () => {
    const sent: Array<{ key: string; items: number[] }> = [];
    const batches = new TurnBatches<{ name: string }, number, number>((key) => ({
      alone: async (item) => {
        sent.push({ key: key.name, items: [item] });
        return item;
      },
      together: async (items) => {
        sent.push({ key: key.name, items: [...items] });
        return items.map((item) => item * 2);
      },
      maxSize: 10,
    }));
    const a = { name: 'a' };
    const b = { name: 'b' };
    expect(batches.stats(a)).toBeNull();
    const answers = await Promise.all([
      batches.add(a, 1),
      batches.add(b, 2),
      batches.add(a, 3),
      batches.add(b, 4),
    ]);
    expect(answers).toEqual([2, 4, 6, 8]);
    expect(sent).toEqual([
      { key: 'a', items: [1, 3] },
      { key: 'b', items: [2, 4] },
    ]);
    expect(batches.stats(a)).toMatchObject({ together: 1, carried: 2 });
  });
});
