// The one error of the embedded database: a message that tells a developer what to do (set
// DATABASE_URL, fix a directory's mode, stop another server), with the cause attached.
export class EmbeddedPostgresError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddedPostgresError';
  }
}
