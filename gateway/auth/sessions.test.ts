import { createHash, createHmac, randomBytes } from 'node:crypto';
import { AppError } from '../../core/errors';
import { Authenticator, adminTokenVerifier } from './credentials';
import { SESSION_LIFETIME_SECONDS, sessionIssuer, sessionVerifier } from './sessions';

const SECRET = randomBytes(32);
const ADDRESS = `0x${'ab'.repeat(20)}`;
const POLICY_ID = (2n ** 200n + 3n).toString();
const T0 = new Date('2026-11-22T09:00:00Z');

function clockAt(date: Date) {
  let now = date;
  return { now: () => now, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

function sessionInvalid(verify: () => unknown): string {
  try {
    verify();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('SESSION_INVALID');
    return (error as AppError).message;
  }
  throw new Error('expected SESSION_INVALID');
}

describe('session bearers', () => {
  it('turn a consumer sign-in into a consumer actor bound to its policy, and an owner sign-in into an owner actor', () => {
    const clock = clockAt(T0);
    const issue = sessionIssuer(SECRET, clock.now);
    const verify = sessionVerifier(SECRET, clock.now);
    const expiresAt = new Date(T0.getTime() + SESSION_LIFETIME_SECONDS * 1000);
    const consumer = issue({
      address: ADDRESS.toUpperCase().replace('0X', '0x'),
      policyId: POLICY_ID,
      expiresAt,
    });
    expect(consumer).toMatchObject({
      tokenType: 'Bearer',
      session: 'consumer',
      address: ADDRESS,
      policyId: POLICY_ID,
      expiresAt: expiresAt.toISOString(),
      expiresInSeconds: 1800,
    });
    expect(consumer.accessToken).toMatch(/^scs1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verify(consumer.accessToken)).toEqual({
      kind: 'consumer',
      address: ADDRESS,
      policyId: POLICY_ID,
    });
    const owner = issue({ address: ADDRESS, policyId: null, expiresAt });
    expect(verify(owner.accessToken)).toEqual({ kind: 'owner', address: ADDRESS });
  });

  it('expire after 30 minutes by the injected clock, whatever lifetime the claims ask for', () => {
    const clock = clockAt(T0);
    const issued = sessionIssuer(
      SECRET,
      clock.now,
    )({ address: ADDRESS, policyId: null, expiresAt: new Date(T0.getTime() + 24 * 3600_000) });
    expect(issued.expiresInSeconds).toBe(SESSION_LIFETIME_SECONDS);
    const verify = sessionVerifier(SECRET, clock.now);
    clock.advance(SESSION_LIFETIME_SECONDS * 1000 - 1000);
    expect(verify(issued.accessToken)).toEqual({ kind: 'owner', address: ADDRESS });
    clock.advance(1000);
    expect(sessionInvalid(() => verify(issued.accessToken))).toMatch(/expired/);
  });

  it('refuse a tampered payload, another secret’s signature and a forged lifetime', () => {
    const clock = clockAt(T0);
    const issued = sessionIssuer(
      SECRET,
      clock.now,
    )({ address: ADDRESS, policyId: '7', expiresAt: new Date(T0.getTime() + 60_000) });
    const verify = sessionVerifier(SECRET, clock.now);
    const [prefix, payload, mac] = issued.accessToken.split('.');
    const widened = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), pid: '8' }),
    ).toString('base64url');
    sessionInvalid(() => verify(`${prefix}.${widened}.${mac}`));
    sessionInvalid(() =>
      verify(
        sessionIssuer(
          randomBytes(32),
          clock.now,
        )({ address: ADDRESS, policyId: '7', expiresAt: new Date(T0.getTime() + 60_000) })
          .accessToken,
      ),
    );
    sessionInvalid(() => verify(`${prefix}.${payload}`));
    // Even with the secret, a token claiming a day's lifetime is refused.
    const long = Buffer.from(
      JSON.stringify({
        typ: 'owner',
        sub: ADDRESS,
        iat: T0.getTime() / 1000,
        exp: T0.getTime() / 1000 + 86_400,
      }),
    ).toString('base64url');
    const signed = createHmac('sha256', SECRET).update(`scs1.${long}`).digest('base64url');
    expect(sessionInvalid(() => verify(`scs1.${long}.${signed}`))).toMatch(/lifetime/);
  });

  it('leave other bearers to other verifiers: the admin token still authenticates beside sessions', () => {
    const clock = clockAt(T0);
    const authenticator = new Authenticator([
      adminTokenVerifier([createHash('sha256').update('the-admin-token').digest()]),
      sessionVerifier(SECRET, clock.now),
    ]);
    expect(sessionVerifier(SECRET, clock.now)('not-a-session-token')).toBeNull();
    expect(authenticator.authenticate('Bearer the-admin-token')).toEqual({ kind: 'admin' });
    const issued = sessionIssuer(
      SECRET,
      clock.now,
    )({ address: ADDRESS, policyId: null, expiresAt: new Date(T0.getTime() + 60_000) });
    expect(authenticator.authenticate(`Bearer ${issued.accessToken}`)).toEqual({
      kind: 'owner',
      address: ADDRESS,
    });
    sessionInvalid(() => authenticator.authenticate('Bearer something-else'));
  });

  it('refuse to run with a short secret', () => {
    expect(() => sessionVerifier(randomBytes(16), () => T0)).toThrow(/at least 32 bytes/);
    expect(() => sessionIssuer(randomBytes(16), () => T0)).toThrow(/at least 32 bytes/);
  });
});
