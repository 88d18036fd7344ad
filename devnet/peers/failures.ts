// A switch a test flips to make a stand-in fail its next requests with a chosen HTTP status, so a
// client's failure paths run against a real server instead of a mock. Off by default.
import { MAX_INBOX_ITEMS } from './inbox';

/** Makes the next `times` requests fail with `status`, for exercising a client's failure paths. */
export class FailureSwitch {
  private pending: { status: number; remaining: number } | null = null;

  arm(status: number, times = 1): void {
    if (!Number.isInteger(status) || status < 400 || status > 599)
      throw new RangeError('status must be 400..599');
    if (!Number.isInteger(times) || times < 1 || times > MAX_INBOX_ITEMS)
      throw new RangeError(`times must be 1..${MAX_INBOX_ITEMS}`);
    this.pending = { status, remaining: times };
  }

  /** Serves normally again, whatever was armed. */
  clear(): void {
    this.pending = null;
  }

  /** The status this request must fail with, or null to serve it normally. */
  take(): number | null {
    if (this.pending === null) return null;
    const { status } = this.pending;
    this.pending.remaining -= 1;
    if (this.pending.remaining === 0) this.pending = null;
    return status;
  }
}
