// The escalation router on its own, over a real Fanout: a notification that carries its committed
// state is published to the owner's topic and the admins' without a read; one without it (or with
// anything off in it) is read once, as its owner; a carried state never overtakes a read still to
// come on its topic; a topic nobody listens to costs nothing. The reads are a recording executor in
// place of the gateway (the end-to-end tests in test/e2e/escalationRouting.test.ts run the real one).
import type { Actor } from '../../platform/actor';
import {
  escalationNotification,
  escalationOwnerTopic,
  ESCALATION_ADMIN_TOPIC,
  type EscalationEvent,
  type EscalationNotification,
  type EscalationUpdate,
  type GatewayExecutor,
} from './escalations';
import { EscalationRouter } from './escalationRouting';
import { Fanout } from './fanout';

const OWNER = `0x${'a1'.repeat(20)}`;
const POLICY = '123456789';
const pollRef = (n: number): string => `esc_${n.toString(16).padStart(24, '0')}`;

function payload(
  n: number,
  state = 'PENDING',
  update: Record<string, unknown> | null = {},
): Record<string, unknown> {
  const whose = { pollRef: pollRef(n), policyId: POLICY, owner: OWNER, state };
  if (update === null) return whose;
  return {
    ...whose,
    update: {
      pollRef: pollRef(n),
      state,
      intentHash: `0x${'b2'.repeat(32)}`,
      policyId: POLICY,
      decision: 'ESCALATED_THRESHOLD',
      amountAtomic: '1500000',
      recipient: `0x${'c3'.repeat(20)}`,
      createdAt: '2026-11-29T01:00:00.000Z',
      expiresAt: '2026-11-29T01:30:00.000Z',
      resolvedAt: state === 'PENDING' ? null : '2026-11-29T01:05:00.123Z',
      resolvedVia: state === 'APPROVED' ? 'dashboard' : null,
      ...update,
    },
  };
}

function change(raw: unknown): Extract<EscalationNotification, { kind: 'CHANGED' }> {
  const parsed = escalationNotification(raw);
  if (parsed?.kind !== 'CHANGED') throw new Error(`not a change: ${JSON.stringify(raw)}`);
  return parsed;
}

/** A gateway stand-in that records each read and answers it when told to. */
function recordingReads() {
  const reads: Array<{ actor: Actor; pollRefs: string[]; answer: (state: string) => void }> = [];
  const execute: GatewayExecutor = (actor, _query, variables) =>
    new Promise((resolve) => {
      const pollRefs = Object.values(variables) as string[];
      reads.push({
        actor,
        pollRefs,
        answer: (state) =>
          resolve({
            data: Object.fromEntries(
              pollRefs.map((ref, index) => [
                `e${index}`,
                {
                  ...(payload(0, state).update as object),
                  pollRef: ref,
                  outcome: null,
                  reason: null,
                },
              ]),
            ),
          }),
      });
    });
  return { reads, execute };
}

async function take(
  iterator: AsyncIterableIterator<unknown>,
  count: number,
): Promise<EscalationEvent[]> {
  const events: EscalationEvent[] = [];
  while (events.length < count) events.push((await iterator.next()).value as EscalationEvent);
  return events;
}

describe('escalation notifications', () => {
  it('carry the committed state as the owner reads it: outcome and reason derived from the state', () => {
    const approved = change(payload(1, 'APPROVED')).update;
    expect(approved).toEqual({
      pollRef: pollRef(1),
      state: 'APPROVED',
      outcome: 'APPROVED',
      reason: 'OWNER_APPROVED',
      intentHash: `0x${'b2'.repeat(32)}`,
      policyId: POLICY,
      decision: 'ESCALATED_THRESHOLD',
      amountAtomic: '1500000',
      recipient: `0x${'c3'.repeat(20)}`,
      createdAt: '2026-11-29T01:00:00.000Z',
      expiresAt: '2026-11-29T01:30:00.000Z',
      resolvedAt: '2026-11-29T01:05:00.123Z',
      resolvedVia: 'dashboard',
    } satisfies EscalationUpdate);
    expect(change(payload(2, 'EXPIRED')).update).toMatchObject({
      outcome: 'DENIED',
      reason: 'ESCALATION_EXPIRED_DEFAULT_DENY',
    });
  });

  it.each([
    ['no state at all', null],
    ['another escalation’s state', { pollRef: pollRef(9) }],
    ['another policy’s state', { policyId: '42' }],
    ['a state that does not exist', { state: 'MAYBE' }],
    ['a timestamp in another format', { createdAt: '2026-11-29 01:00:00+00' }],
    ['a missing amount', { amountAtomic: undefined }],
    ['a number where text belongs', { recipient: 7 }],
  ])('carry no usable state with %s: the change is read instead', (_case, update) => {
    const parsed = change(payload(3, 'PENDING', update));
    expect(parsed.update).toBeUndefined();
    expect(parsed).toMatchObject({ pollRef: pollRef(3), owner: OWNER });
  });
});

describe('EscalationRouter', () => {
  it('publishes a carried state on the owner’s topic and the admins’ without reading it', async () => {
    const fanout = new Fanout<unknown>();
    const { reads, execute } = recordingReads();
    const router = new EscalationRouter(fanout, execute);
    const owner = fanout.subscribe(escalationOwnerTopic(OWNER));
    const admin = fanout.subscribe(ESCALATION_ADMIN_TOPIC);
    const stranger = fanout.subscribe(escalationOwnerTopic(`0x${'d4'.repeat(20)}`));
    router.route(change(payload(1)));
    router.route(change(payload(1, 'APPROVED')));
    const expected = [
      { kind: 'STATE', update: change(payload(1)).update },
      { kind: 'STATE', update: change(payload(1, 'APPROVED')).update },
    ];
    expect(await take(owner, 2)).toEqual(expected);
    expect(await take(admin, 2)).toEqual(expected);
    expect(reads).toEqual([]);
    expect(router.pending).toBe(0);
    // The stranger's topic heard nothing: its next event is the end.
    const next = stranger.next();
    await stranger.return!();
    expect(await next).toEqual({ done: true, value: undefined });
    await owner.return!();
    await admin.return!();
  });

  it('reads a change that carries no state once, as its owner, and keeps commit order behind that read', async () => {
    const fanout = new Fanout<unknown>();
    const { reads, execute } = recordingReads();
    const router = new EscalationRouter(fanout, execute);
    const owner = fanout.subscribe(escalationOwnerTopic(OWNER));
    router.route(change(payload(1, 'PENDING', null)));
    // A carried state arriving while the topic still has a read to do joins the reads.
    router.route(change(payload(2, 'APPROVED')));
    expect(reads.map((read) => [read.actor, read.pollRefs])).toEqual([
      [{ kind: 'owner', address: OWNER }, [pollRef(1)]],
    ]);
    reads[0].answer('PENDING');
    const first = await take(owner, 1);
    expect(first[0]).toMatchObject({ kind: 'STATE', update: { pollRef: pollRef(1) } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads.map((read) => read.pollRefs)).toEqual([[pollRef(1)], [pollRef(2)]]);
    reads[1].answer('APPROVED');
    expect(await take(owner, 1)).toEqual([
      {
        kind: 'STATE',
        update: expect.objectContaining({ pollRef: pollRef(2), state: 'APPROVED' }),
      },
    ]);
    // The topic's reads are done: the next carried state goes straight out again.
    await new Promise((resolve) => setImmediate(resolve));
    router.route(change(payload(3)));
    expect(await take(owner, 1)).toEqual([{ kind: 'STATE', update: change(payload(3)).update }]);
    expect(reads).toHaveLength(2);
    await owner.return!();
  });

  it('spends nothing on a change nobody on this replica listens to', () => {
    const fanout = new Fanout<unknown>();
    const { reads, execute } = recordingReads();
    const router = new EscalationRouter(fanout, execute);
    router.route(change(payload(1, 'PENDING', null)));
    router.route(change(payload(2)));
    expect(reads).toEqual([]);
    expect(router.pending).toBe(0);
  });
});
