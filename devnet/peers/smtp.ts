// A local SMTP sink (smtp-server) that accepts every message on 127.0.0.1, without AUTH or TLS,
// and keeps what arrived: the envelope, Subject/From/To and the text body, read with the minimal
// MIME reader beside it. Never relays anything anywhere.
import type { AddressInfo } from 'node:net';
import {
  SMTPServer,
  type SMTPServerAddress,
  type SMTPServerDataStream,
  type SMTPServerSession,
} from 'smtp-server';
import { DEFAULT_WAIT_TIMEOUT_MS, Inbox } from './inbox';
import { LOOPBACK_HOST } from './loopback';
import { parseMimeMessage } from './mime';

export const MAX_MAIL_BYTES = 1024 * 1024;

export interface SmtpSinkOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** RCPT TO these addresses is refused with 550, as a real server refuses an unknown mailbox. */
  readonly rejectRecipients?: readonly string[];
}

export interface ReceivedMail {
  readonly envelopeFrom: string | null;
  readonly envelopeTo: readonly string[];
  readonly subject: string | null;
  readonly from: string | null;
  readonly to: string | null;
  /** Lowercased header name to its first value, decoded. */
  readonly headers: Readonly<Record<string, string>>;
  /** The text/plain body, LF line ends; null when the mail has none. */
  readonly text: string | null;
  /** The message exactly as received (after SMTP dot-unstuffing). */
  readonly raw: string;
}

export interface SmtpSink {
  /** smtp://127.0.0.1:<port>, for the email adapter's smtpUrl. */
  readonly url: string;
  readonly port: number;
  /** Every accepted message, in order. */
  readonly messages: readonly ReceivedMail[];
  waitForMessage(
    predicate?: (mail: ReceivedMail) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new RangeError('port must be 0..65535');
  const messages = new Inbox<ReceivedMail>('mail');
  const rejected = new Set(
    (options.rejectRecipients ?? []).map((address) => address.toLowerCase()),
  );
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    banner: 'spend-control devnet SMTP sink',
    size: MAX_MAIL_BYTES,
    onRcptTo(
      address: SMTPServerAddress,
      _session: SMTPServerSession,
      callback: (error?: Error | null) => void,
    ) {
      if (!rejected.has(address.address.toLowerCase())) return callback();
      callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
    },
    onData(
      stream: SMTPServerDataStream,
      session: SMTPServerSession,
      callback: (error?: Error | null) => void,
    ) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (error: Error) => callback(error));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          callback(
            Object.assign(new Error('message exceeds the sink size limit'), { responseCode: 552 }),
          );
          return;
        }
        messages.record(readMail(Buffer.concat(chunks), session));
        callback(null);
      });
    },
  });
  // Connection-level errors (a client hanging up mid-command) must not crash the process.
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, LOOPBACK_HOST, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.server.address() as AddressInfo).port;
  let stopped: Promise<void> | null = null;
  return {
    url: `smtp://${LOOPBACK_HOST}:${bound}`,
    port: bound,
    messages: messages.items,
    waitForMessage: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      messages.waitFor(predicate, timeoutMs),
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        messages.close();
        server.close(() => resolve());
        for (const connection of server.connections) connection.close();
      });
      return stopped;
    },
  };
}

function readMail(raw: Buffer, session: SMTPServerSession): ReceivedMail {
  // The CRLF before the terminating "." belongs to the SMTP DATA framing, not to the message text.
  const ends = raw.length >= 2 && raw[raw.length - 2] === 0x0d && raw[raw.length - 1] === 0x0a;
  const parsed = parseMimeMessage(ends ? raw.subarray(0, raw.length - 2) : raw);
  const envelopeFrom =
    session.envelope.mailFrom === false ? null : session.envelope.mailFrom.address;
  return {
    envelopeFrom,
    envelopeTo: session.envelope.rcptTo.map((recipient) => recipient.address),
    subject: parsed.headers.subject ?? null,
    from: parsed.headers.from ?? null,
    to: parsed.headers.to ?? null,
    headers: parsed.headers,
    text: parsed.text,
    raw: raw.toString('utf8'),
  };
}
