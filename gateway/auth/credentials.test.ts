import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors';
import { Authenticator, adminTokenVerifier, bearerToken } from './credentials';

const sha256 = (token: string) => createHash('sha256').update(token).digest();

describe('credentials', () => {
  const authenticator = new Authenticator([
    adminTokenVerifier([sha256('first-admin-token'), sha256('second-admin-token')]),
  ]);

  it('recognises every configured admin token by its sha256', async () => {
    expect(await authenticator.authenticate('Bearer first-admin-token')).toEqual({ kind: 'admin' });
    expect(await authenticator.authenticate('bearer second-admin-token')).toEqual({
      kind: 'admin',
    });
  });

  it('treats a missing credential as the anonymous actor', async () => {
    expect(await authenticator.authenticate(undefined)).toEqual({ kind: 'anonymous' });
    expect(await authenticator.authenticate('')).toEqual({ kind: 'anonymous' });
  });

  it('refuses an unknown token and a malformed header with SESSION_INVALID', async () => {
    for (const header of [
      'Bearer not-a-token',
      'Basic abc',
      'Bearer',
      `Bearer ${'x'.repeat(5000)}`,
    ]) {
      await expect(authenticator.authenticate(header)).rejects.toThrow(AppError);
      await expect(authenticator.authenticate(header)).rejects.toMatchObject({
        code: 'SESSION_INVALID',
      });
    }
  });

  it('extracts the token from a bearer header', () => {
    expect(bearerToken('Bearer abc.def')).toBe('abc.def');
    expect(bearerToken(undefined)).toBeNull();
  });
});
