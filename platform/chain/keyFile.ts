// Key files on disk, for the service's key store and a devnet merchant's keys alike: JSON written
// owner-only (0600) through a temporary file, fsync and rename, and read back only when nobody else
// may read it and it is no larger than its caller allows. What the JSON holds is the caller's job.
import fs from 'node:fs';
import path from 'node:path';
import { KeyFileError, KeyFilePermissionsError } from './errors';

export const KEY_FILE_MODE = 0o600;

/**
 * Writes `body` as JSON with mode 0600 so a crash never leaves a half-written key file: a
 * temporary file beside the target, fsync, then rename. Replaces `filePath` if it exists; a caller
 * that must not lose keys checks first.
 */
export function writeKeyFile(filePath: string, body: unknown): void {
  const tempPath = path.join(
    path.dirname(filePath),
    `.${path.basename(filePath)}.${process.pid}.tmp`,
  );
  fs.rmSync(tempPath, { force: true }); // left over only if a previous save by this pid crashed
  const fd = fs.openSync(tempPath, 'wx', KEY_FILE_MODE);
  try {
    fs.writeSync(fd, `${JSON.stringify(body, null, 2)}\n`);
    fs.fchmodSync(fd, KEY_FILE_MODE); // the umask may have narrowed the mode, never widened it; be exact
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tempPath, filePath);
  } catch (error) {
    fs.rmSync(tempPath, { force: true });
    throw new KeyFileError(filePath, 'could not move the new key file into place', {
      cause: error,
    });
  }
}

/** Parses a key file that only its owner may read and that is at most `maxBytes` long. */
export function readKeyFile(filePath: string, maxBytes: number): unknown {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(filePath);
  } catch (error) {
    throw new KeyFileError(filePath, 'cannot be read', { cause: error });
  }
  if ((stat.mode & 0o077) !== 0) throw new KeyFilePermissionsError(filePath, stat.mode);
  if (stat.size > maxBytes) throw new KeyFileError(filePath, `larger than ${maxBytes} bytes`);
  try {
    return JSON.parse(fs.readFileSync(filePath, 'utf8')) as unknown;
  } catch (error) {
    throw new KeyFileError(filePath, 'is not valid JSON', { cause: error });
  }
}
