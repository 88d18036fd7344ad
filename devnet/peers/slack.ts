// A local stand-in for Slack: the Web API's chat.postMessage (bearer token, `{ok:false,error}`
// with HTTP 200 on refusal) and the other direction too: a click on a message button becomes a
// block_actions interaction POSTed to the interactivity URL, form-encoded and signed as Slack signs.
import { createHmac, randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { FailureSwitch } from './failures';
import { DEFAULT_WAIT_TIMEOUT_MS, Inbox } from './inbox';
import { isRecord, parseJson } from './json';
import { serveOnLoopback } from './loopback';
import { isLoopbackHttpUrl, postToService } from './outbound';

export const SLACK_STAND_IN_MAX_BODY_BYTES = 256 * 1024;
const TEAM = { id: 'T0DEVNET01', domain: 'spend-control-devnet' };
const BOT_USER_ID = 'U0DEVNETBOT';

export interface SlackStandInOptions {
  readonly botToken: string;
  readonly signingSecret: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** The clock for ts values and request signatures; defaults to the system clock. */
  readonly now?: () => Date;
}

export interface SlackPostedMessage {
  readonly channel: string;
  readonly text: string | null;
  /** blocks as received, or null. */
  readonly blocks: unknown;
  readonly ts: string;
}

/** What the service POSTed to a response_url of an interaction. */
export interface SlackResponseUrlPost {
  readonly path: string;
  readonly body: unknown;
}

export interface SlackStandIn {
  /** The apiBaseUrl for the adapter (Slack's is https://slack.com/api). */
  readonly url: string;
  /** Every accepted chat.postMessage, in order. */
  readonly sent: readonly SlackPostedMessage[];
  readonly responses: readonly SlackResponseUrlPost[];
  readonly interactivityUrl: string | null;
  waitForMessage(
    predicate?: (message: SlackPostedMessage) => boolean,
    timeoutMs?: number,
  ): Promise<SlackPostedMessage>;
  waitForResponse(
    predicate?: (post: SlackResponseUrlPost) => boolean,
    timeoutMs?: number,
  ): Promise<SlackResponseUrlPost>;
  /** The next `times` API calls answer HTTP `status` (429 with Retry-After: 1). */
  failNext(status: number, times?: number): void;
  /** The app's Interactivity Request URL; loopback only. */
  setInteractivityUrl(url: string): void;
  /**
   * User `userId` clicks the button with `value` on the latest message in `channelId` that has one:
   * a signed block_actions POST to the interactivity URL. Answers the HTTP status. Throws when no
   * such button was posted.
   */
  clickButton(click: { userId: string; channelId: string; value: string }): Promise<number>;
  stop(): Promise<void>;
}

/** What the stand-in's routes share: the token they accept, what they record and the ts clock. */
interface SlackApiState {
  readonly botToken: string;
  readonly sent: Inbox<SlackPostedMessage>;
  readonly responses: Inbox<SlackResponseUrlPost>;
  readonly failures: FailureSwitch;
  readonly nextTs: () => string;
}

/** chat.postMessage as Slack answers it: HTTP 200 always, `{ok:false,error}` on refusal. */
function postMessage(state: SlackApiState, req: Request): Record<string, unknown> {
  const body: Record<string, unknown> = isRecord(req.body) ? req.body : {};
  const bearer =
    /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1] ??
    (typeof body.token === 'string' ? body.token : null);
  if (bearer === null) return { ok: false, error: 'not_authed' };
  if (bearer !== state.botToken) return { ok: false, error: 'invalid_auth' };
  if (typeof body.channel !== 'string' || !/^[CDGUW][A-Z0-9]{2,31}$/.test(body.channel))
    return { ok: false, error: 'channel_not_found' };
  const blocks = typeof body.blocks === 'string' ? parseJson(body.blocks) : (body.blocks ?? null);
  if (blocks !== null && !Array.isArray(blocks)) return { ok: false, error: 'invalid_blocks' };
  const text = typeof body.text === 'string' && body.text.length > 0 ? body.text : null;
  if (text === null && blocks === null) return { ok: false, error: 'no_text' };
  const message: SlackPostedMessage = { channel: body.channel, text, blocks, ts: state.nextTs() };
  state.sent.record(message);
  return { ok: true, channel: message.channel, ts: message.ts, message: messageJson(message) };
}

/** The Web API routes, the response_url receiver and Slack's answers to anything else. */
function slackApi(state: SlackApiState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: SLACK_STAND_IN_MAX_BODY_BYTES }));
  app.use(express.urlencoded({ extended: false, limit: SLACK_STAND_IN_MAX_BODY_BYTES }));
  app.post('/chat.postMessage', (req: Request, res: Response) => {
    const injected = state.failures.take();
    if (injected !== null) {
      if (injected === 429) res.set('retry-after', '1');
      res
        .status(injected)
        .json({ ok: false, error: injected === 429 ? 'ratelimited' : 'internal_error' });
      return;
    }
    res.status(200).json(postMessage(state, req));
  });
  app.post('/actions/:responseId', (req: Request, res: Response) => {
    state.responses.record({ path: req.path, body: req.body });
    res.status(200).json({ ok: true });
  });
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ ok: false, error: 'unknown_method' });
  });
  app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res.status(200).json({ ok: false, error: 'invalid_json' });
  });
  return app;
}

/** The block_actions interaction Slack sends when `userId` clicks `found`'s button. */
function blockActionsPayload(
  click: { userId: string; channelId: string },
  found: { message: SlackPostedMessage; button: FoundButton },
  actionTs: string,
  responseUrlBase: string,
): Record<string, unknown> {
  const { userId, channelId } = click;
  return {
    type: 'block_actions',
    user: { id: userId, username: 'owner', name: 'owner', team_id: TEAM.id },
    api_app_id: 'A0DEVNET01',
    token: 'devnet-verification-token',
    container: {
      type: 'message',
      message_ts: found.message.ts,
      channel_id: channelId,
      is_ephemeral: false,
    },
    trigger_id: `${Date.now()}.${randomBytes(6).toString('hex')}`,
    team: TEAM,
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: channelId, name: 'spend-approvals' },
    message: messageJson(found.message),
    state: { values: {} },
    response_url: `${responseUrlBase}/actions/${randomBytes(8).toString('hex')}`,
    actions: [{ ...found.button.button, block_id: found.button.blockId, action_ts: actionTs }],
  };
}

/** The latest message in `channelId` with a button of `value`, or null. */
function findLatestButton(
  sent: readonly SlackPostedMessage[],
  channelId: string,
  value: string,
): { message: SlackPostedMessage; button: FoundButton } | null {
  const found = [...sent]
    .reverse()
    .map((message) => ({ message, button: findButton(message.blocks, value) }))
    .find((candidate) => candidate.message.channel === channelId && candidate.button !== null);
  if (found === undefined || found.button === null) return null;
  return { message: found.message, button: found.button };
}

/** POSTs a payload form-encoded and signed as Slack signs (v0 HMAC over timestamp and body). */
function postSignedInteraction(
  url: string,
  signingSecret: string,
  timestamp: string,
  payload: Record<string, unknown>,
): Promise<number> {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return postToService(
    url,
    {
      'content-type': 'application/x-www-form-urlencoded',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': signature,
    },
    body,
  );
}

export async function startSlackStandIn(options: SlackStandInOptions): Promise<SlackStandIn> {
  const { botToken, signingSecret } = options;
  if (typeof botToken !== 'string' || !/^[A-Za-z0-9-]{1,256}$/.test(botToken))
    throw new RangeError('botToken must be 1-256 of A-Z a-z 0-9 -');
  if (typeof signingSecret !== 'string' || signingSecret.length === 0)
    throw new RangeError('signingSecret must not be empty');
  const now = options.now ?? (() => new Date());
  const sent = new Inbox<SlackPostedMessage>('Slack message');
  const responses = new Inbox<SlackResponseUrlPost>('Slack response_url post');
  const failures = new FailureSwitch();
  let interactivityUrl: string | null = null;
  let sequence = 0;

  const nextTs = (): string =>
    `${Math.floor(now().getTime() / 1000)}.${String(++sequence % 1_000_000).padStart(6, '0')}`;
  const app = slackApi({ botToken, sent, responses, failures, nextTs });
  const server = await serveOnLoopback(app, options.port ?? 0);

  return {
    url: server.url,
    sent: sent.items,
    responses: responses.items,
    get interactivityUrl() {
      return interactivityUrl;
    },
    waitForMessage: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      sent.waitFor(predicate, timeoutMs),
    waitForResponse: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      responses.waitFor(predicate, timeoutMs),
    failNext: (status, times = 1) => failures.arm(status, times),
    setInteractivityUrl(url) {
      if (!isLoopbackHttpUrl(url))
        throw new RangeError('the devnet stand-in delivers to loopback http(s) URLs only');
      interactivityUrl = url;
    },
    async clickButton({ userId, channelId, value }) {
      if (interactivityUrl === null)
        throw new Error('no interactivity URL is set: call setInteractivityUrl first');
      const found = findLatestButton(sent.items, channelId, value);
      if (found === null)
        throw new Error(`no message in ${channelId} has a button with this value`);
      const payload = blockActionsPayload({ userId, channelId }, found, nextTs(), server.url);
      const timestamp = String(Math.floor(now().getTime() / 1000));
      return postSignedInteraction(interactivityUrl, signingSecret, timestamp, payload);
    },
    async stop() {
      sent.close();
      responses.close();
      await server.stop();
    },
  };
}

function messageJson(message: SlackPostedMessage): Record<string, unknown> {
  return {
    type: 'message',
    subtype: 'bot_message',
    user: BOT_USER_ID,
    bot_id: 'B0DEVNET01',
    text: message.text ?? '',
    ts: message.ts,
    ...(message.blocks === null ? {} : { blocks: message.blocks }),
  };
}

interface FoundButton {
  readonly blockId: string | null;
  readonly button: Record<string, unknown>;
}

function findButton(blocks: unknown, value: string): FoundButton | null {
  if (!Array.isArray(blocks)) return null;
  for (const block of blocks) {
    if (!isRecord(block) || block.type !== 'actions' || !Array.isArray(block.elements)) continue;
    for (const element of block.elements) {
      if (isRecord(element) && element.type === 'button' && element.value === value) {
        return {
          blockId: typeof block.block_id === 'string' ? block.block_id : null,
          button: element,
        };
      }
    }
  }
  return null;
}
