// A stand-in's inbox keeps arrival order, forgets the oldest beyond its bound, and resolves a wait
// with the first match, whether it came before or after the wait began.
import { Inbox, MAX_INBOX_ITEMS } from './inbox';

describe('Inbox', () => {
  it('resolves a wait with the first match, earlier or later', async () => {
    const inbox = new Inbox<number>('number');
    inbox.record(1);
    await expect(inbox.waitFor((n) => n === 1)).resolves.toBe(1);
    const later = inbox.waitFor((n) => n > 5);
    inbox.record(3);
    inbox.record(7);
    inbox.record(9);
    await expect(later).resolves.toBe(7);
    inbox.close();
  });

  it(`keeps only the newest ${MAX_INBOX_ITEMS} items, in order`, () => {
    const inbox = new Inbox<number>('number');
    for (let n = 0; n <= MAX_INBOX_ITEMS; n += 1) inbox.record(n);
    expect(inbox.items.length).toBe(MAX_INBOX_ITEMS);
    expect(inbox.items[0]).toBe(1);
    expect(inbox.items[MAX_INBOX_ITEMS - 1]).toBe(MAX_INBOX_ITEMS);
  });

  it('bounds every wait and rejects waits once closed', async () => {
    const inbox = new Inbox<number>('number');
    expect(() => inbox.waitFor(() => true, 0)).toThrow(RangeError);
    expect(() => inbox.waitFor(() => true, 10 * 60_000)).toThrow(RangeError);
    const pending = inbox.waitFor(() => true, 10_000);
    inbox.close();
    await expect(pending).rejects.toThrow('no matching number: the stand-in stopped');
    await expect(inbox.waitFor(() => true)).rejects.toThrow(/stopped/);
  });
});
