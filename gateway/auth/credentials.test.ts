import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors';
import { Authenticator, adminTokenVerifier, bearerToken } from './credentials';

const sha256 = (token: string) => createHash('sha256').update(token).digest();

describe('credentials', () => {
  const authenticator = new Authenticator([
    adminTokenVerifier([sha256('first-admin-token'), sha256('second-admin-token')]),
  ]);

  it('recognises every configured admin token by its sha256', () => {
    expect(authenticator.authenticate('Bearer first-admin-token')).toEqual({ kind: 'admin' });
    expect(authenticator.authenticate('bearer second-admin-token')).toEqual({ kind: 'admin' });
  });

  it('treats a missing credential as the anonymous actor', () => {
    expect(authenticator.authenticate(undefined)).toEqual({ kind: 'anonymous' });
    expect(authenticator.authenticate('')).toEqual({ kind: 'anonymous' });
  });

  it('refuses an unknown token and a malformed header with SESSION_INVALID', () => {
    for (const header of [
      'Bearer not-a-token',
      'Basic abc',
      'Bearer',
      `Bearer ${'x'.repeat(5000)}`,
    ]) {
      expect(() => authenticator.authenticate(header)).toThrow(AppError);
      try {
        authenticator.authenticate(header);
      } catch (error) {
        expect((error as AppError).code).toBe('SESSION_INVALID');
      }
    }
  });

  it('extracts the token from a bearer header', () => {
    expect(bearerToken('Bearer abc.def')).toBe('abc.def');
    expect(bearerToken(undefined)).toBeNull();
  });
});
