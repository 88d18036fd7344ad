import { Fanout } from './fanout';

describe('fanout', () => {
  it('delivers every event published after subscribe, in order, only to its topic', async () => {
    const fanout = new Fanout<number>();
    const a = fanout.subscribe('a');
    const b = fanout.subscribe('b');
    fanout.publish('a', 1);
    fanout.publish('b', 9);
    fanout.publish('a', 2);
    expect(await a.next()).toEqual({ done: false, value: 1 });
    expect(await a.next()).toEqual({ done: false, value: 2 });
    expect(await b.next()).toEqual({ done: false, value: 9 });
    await a.return!();
    await b.return!();
  });

  it('frees the listener at once when a waiting subscriber returns', async () => {
    const fanout = new Fanout<number>();
    const iterator = fanout.subscribe('t');
    const pending = iterator.next();
    expect(fanout.listenerCount('t')).toBe(1);
    await iterator.return!();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(fanout.listenerCount('t')).toBe(0);
  });
});
