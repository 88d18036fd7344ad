// Whole attack requests for a target: the method (its own, mostly), the path with hostile
// parameters (bad percent-encodings, overlong, raw latin1, unicode), a query, a body (the route's
// fields with plausible or junk values, random JSON, non-JSON text, oversized), a content type,
// and authorization and payment headers from real credentials to garbage.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { AttackRequest } from './http';
import type { AttackTarget } from './surface';
import {
  type FuzzWorld,
  hexBytes,
  jsonText,
  junkString,
  junkValue,
  plausibleValue,
} from './values';

const OTHER_METHODS = [
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'HEAD',
  'FOO',
  'PROPFIND',
];

const BAD_ENCODINGS = [
  '%',
  '%%',
  '%zz',
  '%ff',
  '%FF%FE',
  '%C0%AE',
  '%c0%af',
  '%E0%80%AF',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%00',
  '%2F',
  '%2e%2e',
  '%u0041',
  '%1',
  '%G0',
  '%0a',
  '%20',
  '..',
  '.',
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=bogus',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/vnd.api+json',
  'application/graphql',
  '*/*',
  'json',
  '',
];

const RAW_BODIES = [
  '',
  'null',
  '[]',
  '"text"',
  '1',
  'true',
  '{',
  '{"a":',
  '{"policyId":1,}',
  "{'a':1}",
  '<?xml version="1.0"?><a>1</a>',
  'a=1&policyId=2',
  'command=/spendctl&text=approve%20abc&channel_id=C1&user_id=U1',
  'payload=%7B%22type%22%3A%22block_actions%22%7D',
  '{"update_id":1,"message":{"chat":{"id":1},"from":{"id":2},"text":"approve abc"}}',
  '\ufeff{}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":"\\x41"}',
  '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
];

/** Percent-encodes every byte outside the unreserved set, so the path is legal on the wire. */
function percentEncode(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes)
    out += /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

const encodedUnicode = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 12 })
  .map((text) => percentEncode(Buffer.from(text, 'utf8')));
const rawLatin1 = fc
  .uint8Array({ minLength: 1, maxLength: 8 })
  .map((bytes) => Buffer.from(bytes.map((byte) => 0x80 | byte)).toString('latin1'));
const safeAscii = fc
  .string({ unit: 'grapheme-ascii', maxLength: 8 })
  .map((text) => percentEncode(Buffer.from(text, 'latin1')));

function validParam(name: string, world: FuzzWorld): fc.Arbitrary<string> {
  if (name === 'receiptId')
    return world.receiptId === null
      ? hexBytes(32).map((hex) => `0x${hex}`)
      : fc.constant(world.receiptId);
  if (name === 'pollRef')
    return world.pollRef === null
      ? hexBytes(12).map((hex) => `esc_${hex}`)
      : fc.constant(world.pollRef);
  if (name === 'file')
    return fc.constantFrom('errors.md', 'rest.md', 'security.md', '..%2Fpackage.json', 'ERRORS.MD');
  return safeAscii;
}

function paramValue(name: string, world: FuzzWorld): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: validParam(name, world) },
    { weight: 3, arbitrary: fc.constantFrom(...BAD_ENCODINGS) },
    {
      weight: 3,
      arbitrary: fc
        .array(fc.oneof(fc.constantFrom(...BAD_ENCODINGS), safeAscii, encodedUnicode, rawLatin1), {
          minLength: 1,
          maxLength: 6,
        })
        .map((parts) => parts.join('')),
    },
    { weight: 2, arbitrary: encodedUnicode },
    { weight: 1, arbitrary: rawLatin1 },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1_000, max: 40_000 }), fc.constantFrom('a', '%41'))
        .map(([count, unit]) => unit.repeat(count)),
    },
  );
}

function pathFor(target: AttackTarget, world: FuzzWorld): fc.Arbitrary<string> {
  const segments = target.path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? paramValue(segment.slice(1), world) : fc.constant(segment),
    );
  const filled = fc.tuple(...segments).map((parts) => parts.join('/'));
  return fc.oneof(
    { weight: 8, arbitrary: filled },
    {
      weight: 1,
      arbitrary: fc
        .tuple(filled, fc.constantFrom('/', '//', '/..', '/%2e%2e/catalog', '.json', ';x=1'))
        .map(([path, suffix]) => `${path}${suffix}`),
    },
    {
      weight: 1,
      arbitrary: filled.map((path) => path.replace(/[a-z]/g, (letter) => letter.toUpperCase())),
    },
  );
}

function queryValueText(value: unknown): string {
  return percentEncode(Buffer.from(typeof value === 'string' ? value : jsonText(value), 'utf8'));
}

function queryFor(target: AttackTarget, world: FuzzWorld): fc.Arbitrary<string> {
  const named = target.queryFields.map((field) =>
    fc
      .oneof(plausibleValue(field, world), junkString)
      .map((value) => `${field}=${queryValueText(value)}`),
  );
  return fc.oneof(
    { weight: 5, arbitrary: fc.constant('') },
    ...(named.length > 0
      ? [{ weight: 4, arbitrary: fc.oneof(...named).map((pair) => `?${pair}`) }]
      : []),
    ...(named.length > 0
      ? [
          {
            weight: 1,
            arbitrary: fc
              .tuple(fc.oneof(...named), fc.oneof(...named))
              .map(([a, b]) => `?${a}&${b}`),
          },
        ]
      : []),
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '?%zz',
        '?a[b]=c',
        '?=',
        '?&&&',
        `?q=${'%41'.repeat(3000)}`,
        '?__proto__[admin]=1',
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(safeAscii, fc.oneof(safeAscii, fc.constantFrom(...BAD_ENCODINGS)))
        .map(([key, value]) => `?${key}=${value}`),
    },
  );
}

const POISONS = ['\ud800', '\u0000', '\udfff', 'x\udc00\ud800'];

/** A plausible string with a lone surrogate or NUL appended (objects are poisoned inside by `mutated`). */
function poisoned(value: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return value.chain((item) =>
    typeof item === 'string'
      ? fc.constantFrom(...POISONS).map((poison) => `${item}${poison}`)
      : fc.constant(item),
  );
}

function fieldsBody(target: AttackTarget, world: FuzzWorld): fc.Arbitrary<unknown> {
  const fields = target.bodyFields.map((field) => {
    const plausible = plausibleValue(field, world);
    const value = fc.oneof(
      { weight: 3, arbitrary: plausible },
      { weight: 2, arbitrary: poisoned(plausible) },
      { weight: 1, arbitrary: junkValue },
    );
    return fc.option(value, { freq: 5 }).map((item) => [field, item] as const);
  });
  const extra = fc.option(fc.tuple(junkString, junkValue), { freq: 3 });
  return fc.tuple(fc.tuple(...fields), extra).map(([pairs, stranger]) => {
    const body: Record<string, unknown> = {};
    for (const [field, value] of pairs) if (value !== null) body[field] = value;
    if (stranger !== null) body[stranger[0]] = stranger[1];
    return body;
  });
}

/** The body bytes, or null for none. */
function bodyFor(target: AttackTarget, world: FuzzWorld): fc.Arbitrary<Buffer | null> {
  const text = (value: fc.Arbitrary<unknown>) =>
    value.map((item) => Buffer.from(jsonText(item), 'utf8'));
  return fc.oneof(
    { weight: target.method === 'GET' ? 12 : 2, arbitrary: fc.constant(null) },
    { weight: target.bodyFields.length > 0 ? 10 : 2, arbitrary: text(fieldsBody(target, world)) },
    { weight: 2, arbitrary: text(junkValue) },
    { weight: 1, arbitrary: text(fc.jsonValue({ maxDepth: 4 })) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES).map((raw) => Buffer.from(raw, 'utf8')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
    {
      weight: 1,
      arbitrary: text(fieldsBody(target, world)).map((json) =>
        Buffer.from(json.toString('utf8'), 'utf16le'),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 60_000, max: 80_000 })
        .map((size) => Buffer.from(jsonText({ pad: 'x'.repeat(size) }), 'utf8')),
    },
  );
}

/** A request line holds bytes 0x21–0xff only: anything else is sent percent-encoded as UTF-8. */
function wireSafePath(path: string): string {
  return path.replace(/[^\x21-\xff]/gu, (char) => percentEncode(Buffer.from(char, 'utf8')));
}

/** Header values must be latin1 without controls on the wire; anything else is written as '?'. */
function headerSafe(value: string): string {
  return value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

/** Real credentials often (admin mostly on admin routes, so their input checks run), garbage sometimes. */
function authorizationFor(target: AttackTarget, world: FuzzWorld): fc.Arbitrary<string | null> {
  const tampered = (token: string) => `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
  const admin = `Bearer ${world.adminToken}`;
  const real =
    target.auth === 'admin'
      ? [admin, admin, admin, `Bearer ${world.ownerToken}`]
      : [admin, `Bearer ${world.ownerToken}`, `Bearer ${world.consumerToken}`];
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: fc.constantFrom(...real) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Basic YWRtaW46YWRtaW4=',
        'Bearer scs1.',
        'Bearer scs1.e30.AAAA',
        // JWS-shaped junk that reaches the session verifier: alg none, an empty payload, no signature.
        'Bearer eyJhbGciOiJub25lIiwidHlwIjoic2Vzc2lvbitqd3QifQ.e30.',
        'Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6InNlc3Npb24rand0In0.e30.AAAA',
        `Bearer ${tampered(world.ownerToken)}`,
        `bearer ${world.adminToken}`,
        `Bearer ${world.adminToken} ${world.adminToken}`,
        `Bearer ${'a'.repeat(9_000)}`,
        'Bearer \u00ff\u00fe',
      ),
    },
    { weight: 1, arbitrary: junkString },
  );
}

function paymentPayload(world: FuzzWorld): fc.Arbitrary<string> {
  return fc
    .tuple(junkValue, hexBytes(65), fc.constantFrom('1', '0', '-1', '1e400', '9'.repeat(90)))
    .map(([junk, signature, value]) =>
      Buffer.from(
        jsonText({
          x402Version: 2,
          resource: { url: 'http://127.0.0.1/ping_service' },
          accepted: {
            scheme: 'exact',
            network: 'eip155:196',
            amount: value,
            asset: world.intent.token,
            payTo: world.ownerAddress,
            maxTimeoutSeconds: 60,
            extra: junk,
          },
          payload: {
            authorization: {
              from: world.ownerAddress,
              to: world.ownerAddress,
              value,
              validAfter: '0',
              validBefore: '99999999999',
              nonce: `0x${'0'.repeat(64)}`,
            },
            signature: `0x${signature}`,
          },
        }),
        'utf8',
      ).toString('base64'),
    );
}

function paymentFor(world: FuzzWorld): fc.Arbitrary<readonly [string, string] | null> {
  const value = fc.oneof(
    paymentPayload(world),
    fc.constantFrom(
      'garbage',
      '=',
      'eyJ4',
      'e30=',
      Buffer.from('{"x402Version":2}').toString('base64'),
      'A'.repeat(8_000),
    ),
    junkValue.map((junk) => Buffer.from(jsonText(junk), 'utf8').toString('base64')),
  );
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(null) },
    {
      weight: 3,
      arbitrary: fc.tuple(
        fc.constantFrom('payment-signature', 'x-payment', 'PAYMENT-SIGNATURE'),
        value,
      ),
    },
  );
}

type ChannelCredential = 'valid' | 'garbage' | 'none';

/** The verification headers of the channel callbacks: right (signed over this body), wrong, or none. */
function channelHeaders(
  path: string,
  world: FuzzWorld,
  body: Buffer | null,
  credential: ChannelCredential,
): Record<string, string> {
  if (credential === 'none') return {};
  const valid = credential === 'valid';
  if (path === '/channels/telegram/webhook')
    return { 'x-telegram-bot-api-secret-token': valid ? world.telegramSecret : 'nope' };
  const timestamp = String(Math.floor(Date.now() / 1000));
  if (path === '/channels/slack/interactivity') {
    const mac = createHmac('sha256', valid ? world.slackSigningSecret : 'nope')
      .update(`v0:${timestamp}:${body?.toString('utf8') ?? ''}`)
      .digest('hex');
    return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${mac}` };
  }
  if (path === '/channels/webhook/reply')
    return {
      'x-spend-control-timestamp': valid ? timestamp : '1e400',
      'x-spend-control-signature': `v1=${'0'.repeat(64)}`,
    };
  return {};
}

function requestFor(target: AttackTarget, world: FuzzWorld): fc.Arbitrary<AttackRequest> {
  return fc
    .record({
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constant(target.method) },
        { weight: 2, arbitrary: fc.constantFrom(...OTHER_METHODS) },
      ),
      path: pathFor(target, world),
      query: queryFor(target, world),
      body: bodyFor(target, world),
      contentType: fc.oneof(
        { weight: 6, arbitrary: fc.constant('application/json') },
        { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
      ),
      contentEncoding: fc.oneof(
        { weight: 30, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'bogus', 'identity') },
      ),
      authorization: authorizationFor(target, world),
      payment: target.priced || target.kind === 'graphql' ? paymentFor(world) : fc.constant(null),
      channel: fc.constantFrom<ChannelCredential>('valid', 'valid', 'garbage', 'none'),
    })
    .map((parts) => {
      const headers: Record<string, string> = channelHeaders(
        target.path,
        world,
        parts.body,
        parts.channel,
      );
      if (parts.body !== null && parts.contentType !== '')
        headers['content-type'] = parts.contentType;
      if (parts.contentEncoding !== null && parts.body !== null)
        headers['content-encoding'] = parts.contentEncoding;
      if (parts.authorization !== null) headers.authorization = headerSafe(parts.authorization);
      if (parts.payment !== null) headers[parts.payment[0]] = headerSafe(parts.payment[1]);
      return {
        method: parts.method,
        path: wireSafePath(`${parts.path}${parts.query}`),
        headers,
        body: parts.body,
        label: target.path,
        kind: target.kind,
      };
    });
}

const unknownPath: fc.Arbitrary<AttackRequest> = fc
  .tuple(
    fc.constantFrom(...OTHER_METHODS),
    fc.oneof(
      fc
        .array(fc.oneof(safeAscii, fc.constantFrom(...BAD_ENCODINGS), encodedUnicode), {
          minLength: 1,
          maxLength: 5,
        })
        .map((parts) => `/${parts.join('/')}`),
      fc.constantFrom(
        '*',
        '/',
        '//',
        '/%2e%2e/%2e%2e/etc/passwd',
        'http://evil.example/catalog',
        `/${'a'.repeat(33_000)}`,
        '/graphql/../catalog',
        '/.env',
        '/docs/../package.json',
      ),
    ),
  )
  .map(([method, path]) => ({
    method,
    path: wireSafePath(path),
    headers: {},
    body: null,
    label: 'unknown path',
    kind: 'unknown' as const,
  }));

/** One request against the surface: mostly a known target, sometimes a path nobody serves. */
export function attackRequest(
  targets: readonly AttackTarget[],
  world: FuzzWorld,
): fc.Arbitrary<AttackRequest> {
  return fc.oneof(
    {
      weight: 30,
      arbitrary: fc.constantFrom(...targets).chain((target) => requestFor(target, world)),
    },
    { weight: 1, arbitrary: unknownPath },
  );
}
