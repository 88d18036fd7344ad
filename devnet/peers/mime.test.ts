// The minimal MIME reader: headers unfolded and decoded, and the text/plain body in each transfer
// encoding the SMTP sink meets.
import { parseMimeMessage } from './mime';

const crlf = (lines: string[]): Buffer => Buffer.from(lines.join('\r\n'), 'utf8');

describe('parseMimeMessage', () => {
  it('unfolds headers, keeps the first of repeated ones and decodes adjacent encoded words', () => {
    const parsed = parseMimeMessage(
      crlf([
        'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=',
        ' =?UTF-8?B?4oCUIGRh?=',
        'X-Twice: first',
        'X-Twice: second',
        '',
        'body',
      ]),
    );
    expect(parsed.headers.subject).toBe('Grüße— da');
    expect(parsed.headers['x-twice']).toBe('first');
    expect(parsed.text).toBe('body');
  });

  it('decodes base64 and quoted-printable bodies in their charset', () => {
    const base64 = Buffer.from('Zahlung über 12,50 €\r\nEnde', 'utf8').toString('base64');
    expect(
      parseMimeMessage(
        crlf([
          'Content-Type: text/plain; charset=utf-8',
          'Content-Transfer-Encoding: base64',
          '',
          base64,
        ]),
      ).text,
    ).toBe('Zahlung über 12,50 €\nEnde');
    expect(
      parseMimeMessage(
        crlf([
          'Content-Type: text/plain; charset=iso-8859-1',
          'Content-Transfer-Encoding: quoted-printable',
          '',
          'caf=E9 au =',
          'lait',
        ]),
      ).text,
    ).toBe('café au lait');
  });

  it('has no text for a non-text body, and looks only a bounded depth into multiparts', () => {
    expect(parseMimeMessage(crlf(['Content-Type: image/png', '', 'xx'])).text).toBeNull();
    const nested = (depth: number): string[] =>
      depth === 0
        ? ['Content-Type: text/plain', '', 'deep']
        : [
            `Content-Type: multipart/mixed; boundary="b${depth}"`,
            '',
            `--b${depth}`,
            ...nested(depth - 1),
            `--b${depth}--`,
          ];
    expect(parseMimeMessage(crlf(nested(2))).text).toBe('deep');
    expect(parseMimeMessage(crlf(nested(4))).text).toBeNull();
  });
});
