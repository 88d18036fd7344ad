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

  it('publishes under a prefix to every keyed topic that has listeners, and to no other', async () => {
    const fanout = new Fanout<number>();
    const one = fanout.subscribe('anchor:1');
    const two = fanout.subscribe('anchor:2');
    const other = fanout.subscribe('policy:1');
    fanout.publishUnder('anchor:', 7);
    fanout.publish('policy:1', 8);
    expect(await one.next()).toEqual({ done: false, value: 7 });
    expect(await two.next()).toEqual({ done: false, value: 7 });
    expect(await other.next()).toEqual({ done: false, value: 8 });
    for (const iterator of [one, two, other]) await iterator.return!();
  });
});

describe('fanout topic families', () => {
  it('counts a plain name’s listeners with those of its keyed topics, a keyed topic’s alone, and forgets what left', async () => {
    const fanout = new Fanout<number>();
    const alice = fanout.subscribe('escalationUpdated:0xa');
    const alsoAlice = fanout.subscribe('escalationUpdated:0xa');
    const bob = fanout.subscribe('escalationUpdated:0xb');
    const catalog = fanout.subscribe('catalogChanged');
    expect(fanout.listenerCount('escalationUpdated')).toBe(3);
    expect(fanout.listenerCount('escalationUpdated:0xa')).toBe(2);
    expect(fanout.listenerCount('catalogChanged')).toBe(1);
    fanout.publish('escalationUpdated:0xb', 5);
    expect(await bob.next()).toEqual({ done: false, value: 5 });
    await alice.return!();
    await bob.return!();
    await bob.return!();
    expect(fanout.listenerCount('escalationUpdated')).toBe(1);
    expect(fanout.listenerCount('escalationUpdated:0xb')).toBe(0);
    fanout.publish('escalationUpdated:0xa', 6);
    expect(await alsoAlice.next()).toEqual({ done: false, value: 6 });
    expect(await alice.next()).toEqual({ done: true, value: undefined });
    await alsoAlice.return!();
    await catalog.return!();
    expect(fanout.listenerCount('escalationUpdated')).toBe(0);
    expect(fanout.listenerCount('catalogChanged')).toBe(0);
  });
});
