// The webhook receiver records every request exactly as it arrived and answers 200 unless told to
// fail; waits resolve on earlier or later requests and reject when nothing matching comes.
import { type WebhookReceiver, startWebhookReceiver } from './webhookReceiver';

describe('webhook receiver', () => {
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await receiver.stop();
  });

  it('records method, path, headers and the raw body, and answers 200', async () => {
    const rawBody = '{"b": 1,  "a": 2}';
    const response = await fetch(`${receiver.url}/hooks/x?y=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-extra': 'v' },
      body: rawBody,
    });
    expect(response.status).toBe(200);
    expect(await receiver.waitForRequest((req) => req.path === '/hooks/x?y=1')).toMatchObject({
      method: 'POST',
      rawBody,
      headers: expect.objectContaining({ 'x-extra': 'v' }),
    });
  });

  it('waits for a request that has not arrived yet', async () => {
    const waiting = receiver.waitForRequest((req) => req.path === '/later');
    await fetch(`${receiver.url}/later`, { method: 'POST', body: 'x' });
    expect((await waiting).rawBody).toBe('x');
  });

  it('fails the next requests on request, still recording them', async () => {
    receiver.failNext(500, 1);
    expect((await fetch(`${receiver.url}/fail`, { method: 'POST', body: 'x' })).status).toBe(500);
    expect((await fetch(`${receiver.url}/fail`, { method: 'POST', body: 'y' })).status).toBe(200);
    expect(
      receiver.requests.filter((req) => req.path === '/fail').map((req) => req.rawBody),
    ).toEqual(['x', 'y']);
  });

  it('rejects a wait when nothing matching arrives', async () => {
    await expect(receiver.waitForRequest((req) => req.path === '/never', 20)).rejects.toThrow(
      /no matching webhook request within 20 ms/,
    );
  });

  it('rejects pending waits and closes every socket on stop', async () => {
    const other = await startWebhookReceiver();
    await fetch(`${other.url}/keep-alive`, { method: 'POST', body: 'x' });
    const pending = other.waitForRequest((req) => req.path === '/never', 10_000);
    await other.stop();
    await expect(pending).rejects.toThrow(/stopped/);
    await expect(fetch(`${other.url}/after`, { method: 'POST', body: 'x' })).rejects.toThrow();
  });
});
