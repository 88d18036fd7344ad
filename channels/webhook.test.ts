// The webhook channel against a real local receiver: what arrives, how it is signed, how each kind
// of failure is reported, and the checks on the owner's signed reply.
import { createHmac } from 'node:crypto';
import { serveOnLoopback } from '../devnet/peers/loopback';
import { type WebhookReceiver, startWebhookReceiver } from '../devnet/peers/webhookReceiver';
import { deliveryError } from './test-support/delivery';
import {
  FIXED_NOW,
  SAMPLE_CODE,
  SAMPLE_POLL_REF,
  SAMPLE_RECIPIENT,
  sampleNotice,
} from './test-support/notices';
import { renderOutcomeText } from './outcome';
import { SAMPLE_INTENT_ID, sampleContradicted, sampleOutcome } from './test-support/outcomes';
import type { ChannelTarget } from './types';
import {
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  createWebhookAdapter,
  parseWebhookReplyBody,
  signWebhookBody,
  verifyWebhookReply,
} from './webhook';

const SECRET = 'whsec_owner-shared-secret-0123456789';
const REPLY_URL = 'http://127.0.0.1:3000/escalations/webhook-replies';

describe('webhook adapter', () => {
  let receiver: WebhookReceiver;
  let target: ChannelTarget;
  const adapter = createWebhookAdapter({ now: () => FIXED_NOW, replyUrl: REPLY_URL });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    target = {
      kind: 'webhook',
      address: `${receiver.url}/hooks/owner-7?token=path-secret`,
      secret: SECRET,
    };
  });

  afterAll(async () => {
    await receiver.stop();
  });

  it('POSTs an outcome as signed JSON of type consumer_intent.outcome, with no code and no reply', async () => {
    const result = await adapter.sendOutcome(target, sampleContradicted());
    expect(result).toEqual({ externalId: null });
    const request = await receiver.waitForRequest((req) => req.rawBody.includes(SAMPLE_INTENT_ID));
    const body = JSON.parse(request.rawBody);
    expect(body).toEqual({
      type: 'consumer_intent.outcome',
      intentId: SAMPLE_INTENT_ID,
      outcome: 'MANUAL_REVIEW',
      policyId: '4242',
      policyName: 'Research agent budget',
      capability: 'domains.check',
      params: 'domain=example.test',
      amount: '0.05025',
      asset: 'USDT0',
      network: 'eip155:196',
      reason: {
        code: 'DELIVERY_CONTRADICTED',
        description: expect.stringMatching(/^The registry contradicts what the merchant said/),
      },
      delivery: {
        verified: false,
        method: 'RDAP',
        source: 'https://rdap.registry.example/domain/example.test',
        detail: expect.stringMatching(/^the registry contradicts the merchant/),
      },
      refund: null,
      humanReview: true,
      occurredAt: FIXED_NOW.toISOString(),
      dashboardUrl: sampleContradicted().dashboardUrl,
      text: renderOutcomeText(sampleContradicted()),
      sentAt: FIXED_NOW.toISOString(),
    });
    expect(
      verifyWebhookReply({
        secret: SECRET,
        timestamp: request.headers[WEBHOOK_TIMESTAMP_HEADER],
        signature: request.headers[WEBHOOK_SIGNATURE_HEADER],
        rawBody: request.rawBody,
        now: FIXED_NOW,
      }),
    ).toBe(true);
    expect(
      verifyWebhookReply({
        secret: 'whsec_some-other-owner-secret-000',
        timestamp: request.headers[WEBHOOK_TIMESTAMP_HEADER],
        signature: request.headers[WEBHOOK_SIGNATURE_HEADER],
        rawBody: request.rawBody,
        now: FIXED_NOW,
      }),
    ).toBe(false);
  });

  it('a COMPLETED outcome carries the verified delivery and no review; a refused POST is a delivery error', async () => {
    await adapter.sendOutcome(target, sampleOutcome({ intentId: 'ci_aaaaaaaaaaaaaaaaaaaaaaaa' }));
    const request = await receiver.waitForRequest((req) =>
      req.rawBody.includes('ci_aaaaaaaaaaaaaaaaaaaaaaaa'),
    );
    expect(JSON.parse(request.rawBody)).toMatchObject({
      outcome: 'COMPLETED',
      reason: null,
      humanReview: false,
      delivery: { verified: true, method: 'RDAP' },
    });
    receiver.failNext(503);
    expect(await deliveryError(adapter.sendOutcome(target, sampleOutcome()))).toMatchObject({
      retryable: true,
      reason: 'HTTP_STATUS',
      status: 503,
    });
  });

  it('POSTs the escalation as signed JSON with the code and how to reply', async () => {
    const result = await adapter.send(target, sampleNotice());
    expect(result).toEqual({ externalId: null });

    const request = await receiver.waitForRequest((req) => req.rawBody.includes(SAMPLE_POLL_REF));
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks/owner-7?token=path-secret');
    expect(request.headers['content-type']).toBe('application/json');
    const body = JSON.parse(request.rawBody);
    expect(body).toMatchObject({
      type: 'escalation.requested',
      pollRef: SAMPLE_POLL_REF,
      policyId: '4242',
      policyName: 'Research agent budget',
      amount: '12.50',
      asset: 'USDC',
      network: 'eip155:8453',
      recipient: SAMPLE_RECIPIENT,
      item: 'Satellite imagery, tile 31UDQ',
      rule: {
        id: 'escalate.aboveThreshold',
        name: 'approval threshold',
        reason: 'ESCALATED_THRESHOLD',
      },
      expiresAt: '2026-03-14T09:30:00Z',
      onExpiry: 'DENIED',
      code: SAMPLE_CODE,
      reply: { approve: `APPROVE ${SAMPLE_CODE}`, deny: `DENY ${SAMPLE_CODE}` },
      replyUrl: REPLY_URL,
      sentAt: FIXED_NOW.toISOString(),
    });
    expect(body.text).toContain('silence means denial');
    expect(body.text).toContain("The amount is above the policy's approval threshold");

    expect(request.headers[WEBHOOK_TIMESTAMP_HEADER]).toBe(String(FIXED_NOW.getTime() / 1000));
    const expectedHmac = createHmac('sha256', SECRET)
      .update(`${FIXED_NOW.getTime() / 1000}.${request.rawBody}`)
      .digest('hex');
    expect(request.headers[WEBHOOK_SIGNATURE_HEADER]).toBe(`v1=${expectedHmac}`);
    expect(
      verifyWebhookReply({
        secret: SECRET,
        timestamp: request.headers[WEBHOOK_TIMESTAMP_HEADER],
        signature: request.headers[WEBHOOK_SIGNATURE_HEADER],
        rawBody: request.rawBody,
        now: FIXED_NOW,
      }),
    ).toBe(true);
  });

  it('reports a 5xx answer as retryable, with the status', async () => {
    receiver.failNext(503);
    const error = await deliveryError(adapter.send(target, sampleNotice()));
    expect(error).toMatchObject({
      kind: 'webhook',
      retryable: true,
      reason: 'HTTP_STATUS',
      status: 503,
    });
  });

  it('reports a 4xx answer as not retryable', async () => {
    receiver.failNext(410);
    const error = await deliveryError(adapter.send(target, sampleNotice()));
    expect(error).toMatchObject({ retryable: false, reason: 'HTTP_STATUS', status: 410 });
  });

  it('reports a refused connection as retryable', async () => {
    const gone = await startWebhookReceiver();
    await gone.stop();
    const error = await deliveryError(
      adapter.send({ ...target, address: `${gone.url}/hooks` }, sampleNotice()),
    );
    expect(error).toMatchObject({ retryable: true, reason: 'NETWORK', peerError: 'ECONNREFUSED' });
  });

  it('reports a peer that does not answer in time as retryable', async () => {
    const silent = await serveOnLoopback(() => undefined);
    try {
      const impatient = createWebhookAdapter({ now: () => FIXED_NOW, timeoutMs: 50 });
      const error = await deliveryError(
        impatient.send({ ...target, address: `${silent.url}/hooks` }, sampleNotice()),
      );
      expect(error).toMatchObject({ retryable: true, reason: 'TIMEOUT', status: null });
    } finally {
      await silent.stop();
    }
  });

  it('refuses a target without a usable secret or URL, without trying', async () => {
    const before = receiver.requests.length;
    for (const bad of [
      { ...target, secret: undefined },
      { ...target, secret: 'short' },
      { ...target, address: 'ftp://127.0.0.1/hook' },
      { ...target, address: `http://user:pass@${new URL(receiver.url).host}/hook` },
      { ...target, kind: 'slack' as const },
    ]) {
      expect(await deliveryError(adapter.send(bad, sampleNotice()))).toMatchObject({
        retryable: false,
        reason: 'INVALID_INPUT',
      });
    }
    expect(
      await deliveryError(adapter.send(target, sampleNotice({ code: 'not-a-code' }))),
    ).toMatchObject({ reason: 'INVALID_INPUT' });
    expect(receiver.requests.length).toBe(before);
  });

  it('never puts the secret, the URL path or the code into an error', async () => {
    receiver.failNext(500);
    const error = await deliveryError(adapter.send(target, sampleNotice()));
    const everything = `${error.message} ${JSON.stringify(error)} ${error.stack ?? ''}`;
    for (const secret of [SECRET, 'path-secret', '/hooks/owner-7', SAMPLE_CODE])
      expect(everything).not.toContain(secret);
  });
});

describe('verifyWebhookReply', () => {
  const rawBody = JSON.stringify({
    type: 'escalation.reply',
    pollRef: SAMPLE_POLL_REF,
    reply: `APPROVE ${SAMPLE_CODE}`,
  });
  const timestamp = String(FIXED_NOW.getTime() / 1000);
  const signed = {
    secret: SECRET,
    timestamp,
    signature: signWebhookBody(SECRET, timestamp, rawBody),
    rawBody,
    now: FIXED_NOW,
  };

  it('accepts a fresh reply signed with the shared secret over the exact body', () => {
    expect(verifyWebhookReply(signed)).toBe(true);
    expect(verifyWebhookReply({ ...signed, rawBody: Buffer.from(rawBody) })).toBe(true);
    expect(verifyWebhookReply({ ...signed, now: new Date(FIXED_NOW.getTime() + 300_000) })).toBe(
      true,
    );
  });

  it('refuses a tampered body', () => {
    expect(verifyWebhookReply({ ...signed, rawBody: rawBody.replace('APPROVE', 'DENY') })).toBe(
      false,
    );
    expect(verifyWebhookReply({ ...signed, rawBody: `${rawBody} ` })).toBe(false);
  });

  it('refuses a timestamp outside the window, in either direction, and a re-signed shifted timestamp', () => {
    expect(verifyWebhookReply({ ...signed, now: new Date(FIXED_NOW.getTime() + 301_000) })).toBe(
      false,
    );
    expect(verifyWebhookReply({ ...signed, now: new Date(FIXED_NOW.getTime() - 301_000) })).toBe(
      false,
    );
    expect(
      verifyWebhookReply({
        ...signed,
        now: new Date(FIXED_NOW.getTime() + 61_000),
        toleranceSeconds: 60,
      }),
    ).toBe(false);
    expect(verifyWebhookReply({ ...signed, timestamp: String(Number(timestamp) + 1) })).toBe(false);
  });

  it('refuses a wrong secret, and a missing, malformed or repeated header', () => {
    expect(verifyWebhookReply({ ...signed, secret: `${SECRET}x` })).toBe(false);
    expect(verifyWebhookReply({ ...signed, secret: '' })).toBe(false);
    expect(verifyWebhookReply({ ...signed, signature: undefined })).toBe(false);
    expect(verifyWebhookReply({ ...signed, timestamp: null })).toBe(false);
    expect(
      verifyWebhookReply({ ...signed, signature: signed.signature.replace('v1=', 'v0=') }),
    ).toBe(false);
    expect(verifyWebhookReply({ ...signed, signature: signed.signature.toUpperCase() })).toBe(
      false,
    );
    expect(verifyWebhookReply({ ...signed, signature: [signed.signature, signed.signature] })).toBe(
      false,
    );
    expect(verifyWebhookReply({ ...signed, timestamp: `${timestamp}.5` })).toBe(false);
  });
});

describe('parseWebhookReplyBody', () => {
  it('reads the pollRef and the reply', () => {
    expect(
      parseWebhookReplyBody(
        JSON.stringify({
          type: 'escalation.reply',
          pollRef: SAMPLE_POLL_REF,
          reply: ` deny ${SAMPLE_CODE.toUpperCase()}`,
        }),
      ),
    ).toEqual({
      pollRef: SAMPLE_POLL_REF,
      decision: 'DENY',
      code: SAMPLE_CODE,
    });
    expect(
      parseWebhookReplyBody(
        Buffer.from(JSON.stringify({ pollRef: SAMPLE_POLL_REF, reply: `APPROVE ${SAMPLE_CODE}` })),
      ),
    ).toMatchObject({ decision: 'APPROVE' });
  });

  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    [
      'another type',
      JSON.stringify({
        type: 'escalation.requested',
        pollRef: SAMPLE_POLL_REF,
        reply: `APPROVE ${SAMPLE_CODE}`,
      }),
    ],
    ['no pollRef', JSON.stringify({ reply: `APPROVE ${SAMPLE_CODE}` })],
    ['a bad reply', JSON.stringify({ pollRef: SAMPLE_POLL_REF, reply: 'APPROVE' })],
    [
      'an oversized body',
      JSON.stringify({
        pollRef: SAMPLE_POLL_REF,
        reply: `APPROVE ${SAMPLE_CODE}`,
        pad: 'x'.repeat(5000),
      }),
    ],
  ])('refuses %s', (_what, body) => {
    expect(parseWebhookReplyBody(body)).toBeNull();
  });
});
