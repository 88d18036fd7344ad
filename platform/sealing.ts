// Short secrets the service must send later but never keep readable at rest (escalation reply
// codes until their notice is delivered, webhook signing keys): AES-256-GCM under a key derived
// from INTERNAL_ACTOR_SECRET with HKDF, so every process that holds the actor secret can open them
// and a database dump alone cannot. Sealed form: 12-byte IV ‖ 16-byte tag ‖ ciphertext.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export const SEALING_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Sealed values are short secrets; a limit keeps a bug from sealing whole documents. */
export const MAX_SEALED_PLAINTEXT_BYTES = 1024;
const HKDF_INFO = 'spend-control/sealing/v1';

export class SealError extends Error {
  constructor(reason: string) {
    super(`sealed value refused: ${reason}`);
    this.name = 'SealError';
  }
}

/** The sealing key of a deployment: HKDF-SHA256 of the actor secret with a fixed label. */
export function deriveSealingKey(actorSecret: Buffer): Buffer {
  if (actorSecret.length < 32) throw new SealError('the actor secret is shorter than 32 bytes');
  return Buffer.from(
    hkdfSync('sha256', actorSecret, Buffer.alloc(0), HKDF_INFO, SEALING_KEY_BYTES),
  );
}

export function seal(key: Buffer, plaintext: string): Buffer {
  const data = Buffer.from(plaintext, 'utf8');
  if (data.length > MAX_SEALED_PLAINTEXT_BYTES) throw new SealError('plaintext too long');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(data), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** Throws SealError when the value was not sealed with this key or was altered. */
export function unseal(key: Buffer, sealed: Buffer): string {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new SealError('too short');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new SealError('authentication failed');
  }
}
