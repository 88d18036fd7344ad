import { createHash, createHmac, randomBytes, webcrypto } from 'node:crypto';
import { SignJWT, decodeProtectedHeader } from 'jose';
import { AppError } from '../../core/errors';
import { Authenticator, adminTokenVerifier } from './credentials';
import {
  SESSION_LIFETIME_SECONDS,
  SESSION_TOKEN_TYPE,
  sessionExpiresAt,
  sessionIssuer,
  sessionVerifier,
} from './sessions';

const SECRET = randomBytes(32);
const ADDRESS = `0x${'ab'.repeat(20)}`;
const POLICY_ID = (2n ** 200n + 3n).toString();
const T0 = new Date('2026-11-22T09:00:00Z');
const T0_SECONDS = T0.getTime() / 1000;

function clockAt(date: Date) {
  let now = date;
  return { now: () => now, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

async function sessionInvalid(verify: () => unknown): Promise<string> {
  try {
    await verify();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('SESSION_INVALID');
    return (error as AppError).message;
  }
  throw new Error('expected SESSION_INVALID');
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const SESSION_HEADER = b64({ alg: 'HS256', typ: SESSION_TOKEN_TYPE });

/** A token signed with the real secret over any header and payload: only our own checks refuse it. */
function signedWithSecret(payload: Record<string, unknown>, header = SESSION_HEADER): string {
  const body = `${header}.${b64(payload)}`;
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

describe('session bearers', () => {
  it('turn a consumer sign-in into a consumer actor bound to its policy, and an owner sign-in into an owner actor', async () => {
    const clock = clockAt(T0);
    const issue = sessionIssuer(SECRET, clock.now);
    const verify = sessionVerifier(SECRET, clock.now);
    const expiresAt = new Date(T0.getTime() + SESSION_LIFETIME_SECONDS * 1000);
    const consumer = await issue({
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
    expect(consumer.accessToken).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(decodeProtectedHeader(consumer.accessToken)).toEqual({
      alg: 'HS256',
      typ: SESSION_TOKEN_TYPE,
    });
    expect(await verify(consumer.accessToken)).toEqual({
      kind: 'consumer',
      address: ADDRESS,
      policyId: POLICY_ID,
    });
    const owner = await issue({ address: ADDRESS, policyId: null, expiresAt });
    expect(await verify(owner.accessToken)).toEqual({ kind: 'owner', address: ADDRESS });
    expect(sessionExpiresAt(`Bearer ${owner.accessToken}`)).toEqual(expiresAt);
    expect(sessionExpiresAt('Bearer the-admin-token')).toBeNull();
  });

  it('expire after 30 minutes by the injected clock, whatever lifetime the claims ask for', async () => {
    const clock = clockAt(T0);
    const issued = await sessionIssuer(
      SECRET,
      clock.now,
    )({ address: ADDRESS, policyId: null, expiresAt: new Date(T0.getTime() + 24 * 3600_000) });
    expect(issued.expiresInSeconds).toBe(SESSION_LIFETIME_SECONDS);
    const verify = sessionVerifier(SECRET, clock.now);
    clock.advance(SESSION_LIFETIME_SECONDS * 1000 - 1000);
    expect(await verify(issued.accessToken)).toEqual({ kind: 'owner', address: ADDRESS });
    clock.advance(1000);
    expect(await sessionInvalid(() => verify(issued.accessToken))).toMatch(/expired/);
  });

  it('refuse a tampered payload, another secret’s signature and a forged lifetime', async () => {
    const clock = clockAt(T0);
    const issued = await sessionIssuer(
      SECRET,
      clock.now,
    )({ address: ADDRESS, policyId: '7', expiresAt: new Date(T0.getTime() + 60_000) });
    const verify = sessionVerifier(SECRET, clock.now);
    const [header, payload, mac] = issued.accessToken.split('.');
    const widened = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), pid: '8' }),
    ).toString('base64url');
    await sessionInvalid(() => verify(`${header}.${widened}.${mac}`));
    await sessionInvalid(async () =>
      verify(
        (
          await sessionIssuer(
            randomBytes(32),
            clock.now,
          )({ address: ADDRESS, policyId: '7', expiresAt: new Date(T0.getTime() + 60_000) })
        ).accessToken,
      ),
    );
    await sessionInvalid(() => verify(`${header}.${payload}`));
    // Even with the secret, a token claiming a day's lifetime is refused.
    const long = signedWithSecret({
      typ: 'owner',
      sub: ADDRESS,
      iat: T0_SECONDS,
      exp: T0_SECONDS + 86_400,
    });
    expect(await sessionInvalid(() => verify(long))).toMatch(/lifetime/);
  });

  it('answer each refusal with its own message, in the order shape, lifetime, expiry', async () => {
    const clock = clockAt(T0);
    const verify = sessionVerifier(SECRET, clock.now);
    const owner = { typ: 'owner', sub: ADDRESS, iat: T0_SECONDS, exp: T0_SECONDS + 60 };
    const refusal = (token: string) => sessionInvalid(() => verify(token));
    expect(await refusal(`${SESSION_HEADER}.!!.x`)).toBe(
      'The session token is malformed; sign in again.',
    );
    expect(await refusal(SESSION_HEADER)).toBe('The session token is malformed; sign in again.');
    expect(await refusal(signedWithSecret({ ...owner, pid: '7' }))).toBe(
      'The session token is malformed; sign in again.',
    );
    expect(await refusal(signedWithSecret({ ...owner, typ: 'consumer', pid: '07' }))).toBe(
      'The session token is malformed; sign in again.',
    );
    expect(await refusal(signedWithSecret({ ...owner, exp: 'later' }))).toBe(
      'The session token is malformed; sign in again.',
    );
    expect(await refusal(`${signedWithSecret(owner).slice(0, -4)}AAAA`)).toBe(
      'The session token is not one this service issued; sign in again.',
    );
    expect(await refusal(signedWithSecret({ ...owner, iat: T0_SECONDS + 120 }))).toBe(
      'The session token has an impossible lifetime; sign in again.',
    );
    // Expired and too long at once: the lifetime is what is wrong with it.
    const expiredLong = { ...owner, iat: T0_SECONDS - 7200, exp: T0_SECONDS - 60 };
    expect(await refusal(signedWithSecret(expiredLong))).toBe(
      'The session token has an impossible lifetime; sign in again.',
    );
    expect(await refusal(signedWithSecret({ ...owner, exp: T0_SECONDS }))).toBe(
      'The session expired; sign in again.',
    );
  });

  it('accept HS256 only: no `none`, no other algorithm even keyed with the secret', async () => {
    const clock = clockAt(T0);
    const verify = sessionVerifier(SECRET, clock.now);
    const owner = { typ: 'owner', sub: ADDRESS, iat: T0_SECONDS, exp: T0_SECONDS + 60 };
    const unsigned = `${b64({ alg: 'none', typ: SESSION_TOKEN_TYPE })}.${b64(owner)}.`;
    expect(await sessionInvalid(() => verify(unsigned))).toMatch(/not one this service issued/);
    const hs512 = await new SignJWT(owner)
      .setProtectedHeader({ alg: 'HS512', typ: SESSION_TOKEN_TYPE })
      .sign(new Uint8Array(SECRET));
    expect(await sessionInvalid(() => verify(hs512))).toMatch(/not one this service issued/);
    const rs256 = signedWithSecret(owner, b64({ alg: 'RS256', typ: SESSION_TOKEN_TYPE }));
    expect(await sessionInvalid(() => verify(rs256))).toMatch(/not one this service issued/);
  });

  it('leave other bearers to other verifiers: the admin token still authenticates beside sessions', async () => {
    const clock = clockAt(T0);
    const authenticator = new Authenticator([
      adminTokenVerifier([createHash('sha256').update('the-admin-token').digest()]),
      sessionVerifier(SECRET, clock.now),
    ]);
    expect(await sessionVerifier(SECRET, clock.now)('not-a-session-token')).toBeNull();
    expect(await authenticator.authenticate('Bearer the-admin-token')).toEqual({ kind: 'admin' });
    const issued = await sessionIssuer(
      SECRET,
      clock.now,
    )({ address: ADDRESS, policyId: null, expiresAt: new Date(T0.getTime() + 60_000) });
    expect(await authenticator.authenticate(`Bearer ${issued.accessToken}`)).toEqual({
      kind: 'owner',
      address: ADDRESS,
    });
    await sessionInvalid(() => authenticator.authenticate('Bearer something-else'));
  });

  it('verify a token’s signature once: presented again it is accepted without one, yet refused once it expires, and a twin with another signature is still refused', async () => {
    const clock = clockAt(T0);
    const verify = sessionVerifier(SECRET, clock.now);
    const issued = await sessionIssuer(
      SECRET,
      clock.now,
    )({ address: ADDRESS, policyId: POLICY_ID, expiresAt: new Date(T0.getTime() + 60_000) });
    const signatures = jest.spyOn(webcrypto.subtle, 'verify');
    try {
      const actor = { kind: 'consumer', address: ADDRESS, policyId: POLICY_ID };
      expect(await verify(issued.accessToken)).toEqual(actor);
      expect(signatures).toHaveBeenCalledTimes(1);
      for (let again = 0; again < 5; again += 1)
        expect(await verify(issued.accessToken)).toEqual(actor);
      expect(signatures).toHaveBeenCalledTimes(1);
      // The same header and claims under another signature is another token: verified, refused.
      const [header, payload] = issued.accessToken.split('.');
      const twin = `${header}.${payload}.${createHmac('sha256', randomBytes(32)).update(`${header}.${payload}`).digest('base64url')}`;
      expect(await sessionInvalid(() => verify(twin))).toMatch(/not one this service issued/);
      expect(signatures).toHaveBeenCalledTimes(2);
      // Remembered, and still bound to the clock.
      clock.advance(60_000);
      expect(await sessionInvalid(() => verify(issued.accessToken))).toMatch(/expired/);
      expect(signatures).toHaveBeenCalledTimes(2);
      // A verifier with another secret (a restart after rotation) remembers nothing.
      clock.advance(-60_000);
      expect(
        await sessionInvalid(() => sessionVerifier(randomBytes(32), clock.now)(issued.accessToken)),
      ).toMatch(/not one this service issued/);
    } finally {
      signatures.mockRestore();
    }
  });

  it('refuse to run with a short secret', () => {
    expect(() => sessionVerifier(randomBytes(16), () => T0)).toThrow(/at least 32 bytes/);
    expect(() => sessionIssuer(randomBytes(16), () => T0)).toThrow(/at least 32 bytes/);
  });
});
