// The email channel against the devnet SMTP sink: a notice with the dashboard link that never
// carries the code or a way to answer by mail, and how SMTP failures are reported.
import { type SmtpSink, startSmtpSink } from '../devnet/peers/smtp';
import { createEmailAdapter, isEmailAddress } from './email';
import { deliveryError } from './test-support/delivery';
import {
  FIXED_NOW,
  SAMPLE_CODE,
  SAMPLE_POLL_REF,
  SAMPLE_RECIPIENT,
  sampleNotice,
} from './test-support/notices';
import { SAMPLE_INTENT_ID, sampleContradicted } from './test-support/outcomes';

const OWNER = 'owner@example.test';
const FROM = 'Spend Control <noreply@spend-control.test>';
const target = { kind: 'email' as const, address: OWNER };

describe('email adapter', () => {
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await startSmtpSink({ rejectRecipients: ['nobody@example.test'] });
  });

  afterAll(async () => {
    await sink.stop();
  });

  it('mails a notice with amount, asset and item in the subject, and the dashboard link', async () => {
    const adapter = createEmailAdapter({ smtpUrl: sink.url, from: FROM, now: () => FIXED_NOW });
    const result = await adapter.send(
      target,
      sampleNotice({ item: 'Satellite imagery — tile 31UDQ' }),
    );
    const mail = await sink.waitForMessage((received) => received.envelopeTo.includes(OWNER));

    expect(result.externalId).toBe(mail.headers['message-id']);
    expect(mail.envelopeFrom).toBe('noreply@spend-control.test');
    expect(mail.to).toBe(OWNER);
    expect(mail.subject).toBe(
      'Spend approval needed: 12.50 USDC for Satellite imagery — tile 31UDQ',
    );
    expect(mail.headers['x-spend-control-poll-ref']).toBe(SAMPLE_POLL_REF);
    for (const words of [
      'Amount: 12.50 USDC on eip155:8453',
      `Recipient: ${SAMPLE_RECIPIENT}`,
      'Item: Satellite imagery — tile 31UDQ',
      "The amount is above the policy's approval threshold",
      'Expires: 2026-03-14T09:30:00Z (UTC, 30 minutes from now)',
      'silence means denial',
      `Decide in the dashboard: http://127.0.0.1:3000/dashboard/escalations/${SAMPLE_POLL_REF}`,
    ]) {
      expect(mail.text).toContain(words);
    }
  });

  it('mails an outcome notice: the headline as subject, the lines as body, the intent id as a header', async () => {
    const adapter = createEmailAdapter({ smtpUrl: sink.url, from: FROM });
    await adapter.sendOutcome(
      { kind: 'email', address: 'outcome@example.test' },
      sampleContradicted(),
    );
    const mail = await sink.waitForMessage((received) =>
      received.envelopeTo.includes('outcome@example.test'),
    );
    expect(mail.subject).toBe(
      'Purchase held for review: domains.check (domain=example.test) for 0.05025 USDT0',
    );
    expect(mail.headers['x-spend-control-intent-id']).toBe(SAMPLE_INTENT_ID);
    expect(mail.text).toContain('(DELIVERY_CONTRADICTED)');
    expect(mail.text).toContain('Nothing is re-sent to the merchant');
    expect(mail.text).toContain('This email is a notice only; there is nothing to answer.');
    expect(mail.raw).not.toMatch(/APPROVE|DENY/);
  });

  it('never carries the code or reply instructions: email is not a decision path', async () => {
    const adapter = createEmailAdapter({ smtpUrl: sink.url, from: FROM });
    await adapter.send({ kind: 'email', address: 'second@example.test' }, sampleNotice());
    const mail = await sink.waitForMessage((received) =>
      received.envelopeTo.includes('second@example.test'),
    );
    expect(mail.raw).not.toContain(SAMPLE_CODE);
    expect(mail.text).not.toMatch(/APPROVE |DENY |reply with/);
    expect(mail.text).toContain('Replies to it are not read and cannot approve or deny anything.');
  });

  it('reports a mailbox the server refuses (550) as not retryable', async () => {
    const adapter = createEmailAdapter({ smtpUrl: sink.url, from: FROM });
    const error = await deliveryError(
      adapter.send({ kind: 'email', address: 'nobody@example.test' }, sampleNotice()),
    );
    expect(error).toMatchObject({
      kind: 'email',
      retryable: false,
      reason: 'REJECTED',
      status: 550,
    });
  });

  it('reports a refused connection as retryable, without the SMTP credentials', async () => {
    const gone = await startSmtpSink();
    await gone.stop();
    const adapter = createEmailAdapter({
      smtpUrl: `smtp://mailer:hunter2-smtp-password@127.0.0.1:${gone.port}`,
      from: FROM,
    });
    const error = await deliveryError(adapter.send(target, sampleNotice()));
    expect(error).toMatchObject({ retryable: true, reason: 'NETWORK' });
    expect(`${error.message} ${JSON.stringify(error)}`).not.toContain('hunter2');
  });

  it('refuses a target that is not an email address, without connecting', async () => {
    const adapter = createEmailAdapter({ smtpUrl: sink.url, from: FROM });
    const before = sink.messages.length;
    for (const address of [
      'owner',
      'a@b@c',
      'owner@example.test\r\nBcc: x@y.z',
      `${'a'.repeat(65)}@example.test`,
      `a@${'b'.repeat(250)}.test`,
    ]) {
      expect(
        await deliveryError(adapter.send({ kind: 'email', address }, sampleNotice())),
      ).toMatchObject({ reason: 'INVALID_INPUT' });
    }
    expect(sink.messages.length).toBe(before);
  });
});

describe('isEmailAddress', () => {
  it('accepts plain addresses only', () => {
    expect(isEmailAddress('a.b+c@example.co')).toBe(true);
    expect(isEmailAddress('"a"@example.co')).toBe(false);
    expect(isEmailAddress('A <a@example.co>')).toBe(false);
  });
});
