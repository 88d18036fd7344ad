// The SMTP sink accepts mail on 127.0.0.1 without AUTH or TLS and reads Subject, To and the text
// body of what nodemailer sends: encoded headers, quoted-printable and multipart bodies included.
import nodemailer from 'nodemailer';
import { type SmtpSink, startSmtpSink } from './smtp';

describe('SMTP sink', () => {
  let sink: SmtpSink;
  const transport = () => nodemailer.createTransport({ url: sink.url });

  beforeAll(async () => {
    sink = await startSmtpSink({ rejectRecipients: ['Refused@Example.test'] });
  });

  afterAll(async () => {
    await sink.stop();
  });

  it('gives an smtp:// URL on 127.0.0.1', () => {
    expect(sink.url).toBe(`smtp://127.0.0.1:${sink.port}`);
  });

  it('reads a UTF-8 subject and a long quoted-printable text body', async () => {
    const line = `Zahlung über 12,50 € — ${'lang '.repeat(30)}`;
    await transport().sendMail({
      from: 'a@example.test',
      to: 'b@example.test',
      subject: 'Grüße — 12.50 USDC',
      text: `${line}\nzweite Zeile`,
    });
    const mail = await sink.waitForMessage((received) =>
      received.envelopeTo.includes('b@example.test'),
    );
    expect(mail).toMatchObject({
      envelopeFrom: 'a@example.test',
      subject: 'Grüße — 12.50 USDC',
      from: 'a@example.test',
      to: 'b@example.test',
    });
    expect(mail.text).toBe(`${line}\nzweite Zeile`);
  });

  it('finds the text part of a multipart message', async () => {
    await transport().sendMail({
      from: 'a@example.test',
      to: 'multi@example.test',
      subject: 'multi',
      text: 'plain part',
      html: '<p>html part</p>',
    });
    const mail = await sink.waitForMessage((received) =>
      received.envelopeTo.includes('multi@example.test'),
    );
    expect(mail.headers['content-type']).toMatch(/^multipart\/alternative/);
    expect(mail.text).toBe('plain part');
  });

  it('refuses a configured recipient with 550', async () => {
    await expect(
      transport().sendMail({
        from: 'a@example.test',
        to: 'refused@example.test',
        subject: 'x',
        text: 'x',
      }),
    ).rejects.toMatchObject({
      responseCode: 550,
    });
  });

  it('offers neither AUTH nor STARTTLS', async () => {
    const info = await transport().sendMail({
      from: 'a@example.test',
      to: 'ehlo@example.test',
      subject: 'x',
      text: 'x',
    });
    expect(info.ehlo).toEqual(expect.arrayContaining(['PIPELINING', 'SIZE 1048576']));
    expect((info.ehlo ?? []).some((extension: string) => /^(AUTH|STARTTLS)/.test(extension))).toBe(
      false,
    );
    const secured = nodemailer.createTransport({ url: sink.url, requireTLS: true });
    await expect(
      secured.sendMail({ from: 'a@example.test', to: 'tls@example.test', subject: 'x', text: 'x' }),
    ).rejects.toBeDefined();
    expect(sink.messages.some((mail) => mail.envelopeTo.includes('tls@example.test'))).toBe(false);
  });
});
