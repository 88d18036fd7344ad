// The semaphore behind the RDAP lookup cap and the subscription read queue: never more holders than permits, waiters served
// in order, a full wait queue refused at once, and a release that runs twice frees one permit only.
import { type Release, Semaphore } from './semaphore';

describe('Semaphore', () => {
  it('holds at most `permits` at once and serves waiters first come, first served', async () => {
    const semaphore = new Semaphore(2, 10);
    const first = await semaphore.tryAcquire();
    const second = await semaphore.tryAcquire();
    const order: string[] = [];
    const third = semaphore.tryAcquire()?.then((release) => (order.push('third'), release));
    const fourth = semaphore.tryAcquire()?.then((release) => (order.push('fourth'), release));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    first?.();
    const thirdRelease = (await third) as Release;
    expect(order).toEqual(['third']);
    thirdRelease();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
    second?.();
  });

  it('refuses to queue past maxWaiting', async () => {
    const semaphore = new Semaphore(1, 1);
    const held = await semaphore.tryAcquire();
    const waiting = semaphore.tryAcquire();
    expect(waiting).not.toBeNull();
    expect(semaphore.tryAcquire()).toBeNull();
    held?.();
    (await waiting)?.();
  });

  it('frees one permit per holder, however often its release is called', async () => {
    const semaphore = new Semaphore(1, 5);
    const release = (await semaphore.tryAcquire()) as Release;
    const next = semaphore.tryAcquire();
    const after = semaphore.tryAcquire();
    let afterGot = false;
    void after?.then(() => (afterGot = true));
    release();
    release();
    await next;
    await new Promise((resolve) => setImmediate(resolve));
    expect(afterGot).toBe(false);
  });

  it('refuses nonsense sizes', () => {
    expect(() => new Semaphore(0, 1)).toThrow(RangeError);
    expect(() => new Semaphore(1, -1)).toThrow(RangeError);
  });
});
