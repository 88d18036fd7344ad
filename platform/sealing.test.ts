import { randomBytes } from 'node:crypto';
import { deriveSealingKey, SealError, seal, unseal } from './sealing';

describe('sealing', () => {
  const key = deriveSealingKey(randomBytes(32));

  it('opens what it sealed, and every seal of the same text differs', () => {
    const first = seal(key, '3f9c0d5e8a1b2c4d6e7f8091');
    const second = seal(key, '3f9c0d5e8a1b2c4d6e7f8091');
    expect(first.equals(second)).toBe(false);
    expect(first.toString('utf8')).not.toContain('3f9c0d5e8a1b2c4d6e7f8091');
    expect(unseal(key, first)).toBe('3f9c0d5e8a1b2c4d6e7f8091');
  });

  it('refuses another deployment’s key, an altered value and a truncated one', () => {
    const sealed = seal(key, 'secret');
    expect(() => unseal(deriveSealingKey(randomBytes(32)), sealed)).toThrow(SealError);
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] ^= 1;
    expect(() => unseal(key, altered)).toThrow(SealError);
    expect(() => unseal(key, sealed.subarray(0, 20))).toThrow(SealError);
  });

  it('derives the same key from the same actor secret, and refuses short secrets and long plaintexts', () => {
    const secret = randomBytes(32);
    expect(deriveSealingKey(secret).equals(deriveSealingKey(secret))).toBe(true);
    expect(() => deriveSealingKey(randomBytes(16))).toThrow(SealError);
    expect(() => seal(key, 'x'.repeat(2000))).toThrow(SealError);
  });
});
