// The email channel: an SMTP notice (nodemailer) that an escalation is waiting, with the dashboard
// link, or that a consumer intent reached an outcome (subject + plain body). Email is never a
// decision path: the mail carries no code and no reply instructions (mail is easily forwarded and
// read by others), and says to decide in the dashboard.
import nodemailer from 'nodemailer';
import { ChannelDeliveryError, scrubPeerText } from './errors';
import { NOTICE_FIELD_LIMITS, noticeProblem, plainField, renderNoticeSummary } from './message';
import { outcomeProblem, renderOutcomeLines, renderOutcomeSubject } from './outcome';
import {
  renderEmailConfirmationText,
  renderResolutionHeadline,
  renderResolutionText,
} from './resolution';
import type {
  ResolutionNotice,
  ChannelAdapter,
  ChannelTarget,
  DeliveryResult,
  EscalationNotice,
  OutcomeNotice,
} from './types';

/** Each SMTP step (connect, greeting, idle socket) must finish within this. */
export const SMTP_TIMEOUT_MS = 10_000;
export const MAX_EMAIL_ADDRESS_CHARS = 254;
/** RFC 5321's limit on the part before the @. */
export const MAX_EMAIL_LOCAL_PART_CHARS = 64;
export const MAX_SUBJECT_CHARS = 160;
const EMAIL_ADDRESS_PATTERN = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+$/;
/** nodemailer codes for failures that the same configuration will hit again. */
const PERMANENT_CODES = new Set([
  'EAUTH',
  'ENOAUTH',
  'ECONFIG',
  'EENVELOPE',
  'EMESSAGE',
  'EOAUTH2',
  'EREQUIRETLS',
]);

export interface EmailAdapterOptions {
  /** smtp://host:port or smtps://user:pass@host:port. */
  readonly smtpUrl: string;
  /** The sender address, e.g. "Spend Control <noreply@example.com>" or a bare address. */
  readonly from: string;
  readonly now?: () => Date;
}

export function isEmailAddress(text: unknown): text is string {
  if (
    typeof text !== 'string' ||
    text.length > MAX_EMAIL_ADDRESS_CHARS ||
    !EMAIL_ADDRESS_PATTERN.test(text)
  )
    return false;
  return text.indexOf('@') <= MAX_EMAIL_LOCAL_PART_CHARS;
}

export function renderEmailSubject(notice: EscalationNotice): string {
  const amount = `${plainField(notice.amountDisplay, NOTICE_FIELD_LIMITS.short)} ${plainField(notice.assetSymbol, NOTICE_FIELD_LIMITS.short)}`;
  return plainField(
    `Spend approval needed: ${amount} for ${plainField(notice.item, NOTICE_FIELD_LIMITS.text)}`,
    MAX_SUBJECT_CHARS,
  );
}

/** The summary every channel shows, then the dashboard link; no code, no reply instructions. */
export function renderEmailText(notice: EscalationNotice, now: Date): string {
  return [
    ...renderNoticeSummary(notice, { now }),
    '',
    `Decide in the dashboard: ${plainField(notice.dashboardUrl, NOTICE_FIELD_LIMITS.url)}`,
    '',
    'This email is a notice only. Replies to it are not read and cannot approve or deny anything.',
  ].join('\n');
}

/** A consumer intent's outcome: the lines every channel shows, and that the mail needs no answer. */
export function renderOutcomeEmailText(notice: OutcomeNotice): string {
  return [
    ...renderOutcomeLines(notice),
    '',
    'This email is a notice only; there is nothing to answer. Replies to it are not read.',
  ].join('\n');
}

type MailSend = (
  target: ChannelTarget,
  mail: { subject: string; text: string; headers: Record<string, string> },
) => Promise<DeliveryResult>;

/** One SMTP send with the adapter's bounds; rejections and failures as ChannelDeliveryError. */
function mailSender(options: EmailAdapterOptions): MailSend {
  const transport = nodemailer.createTransport({
    url: options.smtpUrl,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
  return async (
    target: ChannelTarget,
    mail: { subject: string; text: string; headers: Record<string, string> },
  ): Promise<DeliveryResult> => {
    let info: { messageId?: unknown; rejected?: unknown };
    try {
      info = await transport.sendMail({
        from: options.from,
        to: target.address,
        subject: mail.subject,
        text: mail.text,
        headers: { ...mail.headers, 'Auto-Submitted': 'auto-generated' },
      });
    } catch (error) {
      throw smtpFailure(error);
    }
    if (Array.isArray(info.rejected) && info.rejected.length > 0) {
      throw new ChannelDeliveryError('email', 'the SMTP server rejected the recipient', {
        retryable: false,
        reason: 'REJECTED',
      });
    }
    return { externalId: typeof info.messageId === 'string' ? info.messageId : null };
  };
}

export function createEmailAdapter(options: EmailAdapterOptions): ChannelAdapter {
  if (typeof options.smtpUrl !== 'string' || !/^smtps?:\/\//.test(options.smtpUrl)) {
    throw new RangeError('email smtpUrl must be an smtp:// or smtps:// URL');
  }
  if (
    typeof options.from !== 'string' ||
    options.from.trim().length === 0 ||
    /[\r\n]/.test(options.from)
  ) {
    throw new RangeError('email from must be a one-line sender address');
  }
  const now = options.now ?? (() => new Date());
  const deliver = mailSender(options);
  return {
    kind: 'email',
    async send(target: ChannelTarget, notice: EscalationNotice): Promise<DeliveryResult> {
      checkTarget(target);
      const problem = noticeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      const text = renderEmailText(notice, now());
      const subject = renderEmailSubject(notice);
      if (text.includes(notice.code) || subject.includes(notice.code))
        throw invalid('the mail would carry the reply code');
      return deliver(target, {
        subject,
        text,
        headers: { 'X-Spend-Control-Poll-Ref': notice.pollRef },
      });
    },
    async sendOutcome(target: ChannelTarget, notice: OutcomeNotice): Promise<DeliveryResult> {
      checkTarget(target);
      const problem = outcomeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      return deliver(target, {
        subject: renderOutcomeSubject(notice),
        text: renderOutcomeEmailText(notice),
        headers: { 'X-Spend-Control-Intent-Id': notice.intentId },
      });
    },
    async sendResolution(target: ChannelTarget, notice: ResolutionNotice): Promise<DeliveryResult> {
      checkTarget(target);
      return deliver(target, {
        subject: renderResolutionHeadline(notice),
        text: `${renderResolutionText(notice)}\n\nThis email is a notice only; there is nothing to answer.`,
        headers: { 'X-Spend-Control-Poll-Ref': notice.pollRef },
      });
    },
    async sendConfirmation(
      target: ChannelTarget,
      confirmUrl: string,
      expiresAt: Date,
    ): Promise<DeliveryResult> {
      checkTarget(target);
      if (!/^https?:\/\//.test(confirmUrl))
        throw invalid('the confirmation link is not an http(s) URL');
      return deliver(target, {
        subject: 'Confirm your address for Spend Control notices',
        text: renderEmailConfirmationText(confirmUrl, expiresAt),
        headers: {},
      });
    },
  };
}

function checkTarget(target: ChannelTarget): void {
  if (target.kind !== 'email') throw invalid(`target kind is ${target.kind}`);
  if (!isEmailAddress(target.address)) throw invalid('target address is not an email address');
}

/** Classifies by SMTP reply class and nodemailer code; never quotes the server's text or the URL. */
function smtpFailure(error: unknown): ChannelDeliveryError {
  const failure = (error ?? {}) as { code?: unknown; responseCode?: unknown; permanent?: unknown };
  const code =
    typeof failure.code === 'string' ? (scrubPeerText(failure.code, []) ?? 'unknown') : 'unknown';
  const responseCode = typeof failure.responseCode === 'number' ? failure.responseCode : null;
  if (responseCode !== null) {
    const permanent =
      typeof failure.permanent === 'boolean' ? failure.permanent : responseCode >= 500;
    return new ChannelDeliveryError('email', `SMTP server answered ${responseCode} (${code})`, {
      retryable: !permanent,
      reason: 'REJECTED',
      status: responseCode,
      peerError: code,
    });
  }
  const permanent = PERMANENT_CODES.has(code);
  return new ChannelDeliveryError(
    'email',
    `SMTP ${permanent ? 'refused' : 'unreachable'} (${code})`,
    {
      retryable: !permanent,
      reason: permanent ? 'REJECTED' : code === 'ETIMEDOUT' ? 'TIMEOUT' : 'NETWORK',
      peerError: code,
    },
  );
}

function invalid(message: string): ChannelDeliveryError {
  return new ChannelDeliveryError('email', message, { retryable: false, reason: 'INVALID_INPUT' });
}
