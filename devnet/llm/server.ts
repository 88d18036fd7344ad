// A local stand-in for an OpenAI-compatible chat-completions API on 127.0.0.1: POST
// /v1/chat/completions (and /chat/completions) checks the bearer key and the request's shape,
// records it, and answers deterministic names built from the idea as JSON-schema'd content. Fault
// switches (slow, 500, malformed JSON, bad content, invalid names, oversized, refusal, reset)
// exercise every failure path of a client; stop() takes it down (connections refused).
import express, { type NextFunction, type Request, type Response } from 'express';
import { PROMPT_LINES } from '../../platform/llm/prompt';
import { DEFAULT_WAIT_TIMEOUT_MS, Inbox } from '../peers/inbox';
import { isRecord } from '../peers/json';
import { serveOnLoopback } from '../peers/loopback';
import { standInNames } from './names';

export const LLM_FAULT_ANSWERS = [
  'NORMAL',
  'HTTP_500',
  'MALFORMED_JSON',
  'MALFORMED_CONTENT',
  'INVALID_NAMES',
  'MIXED_NAMES',
  'OVERSIZED',
  'REFUSAL',
  'RESET',
] as const;
export type LlmFaultAnswer = (typeof LLM_FAULT_ANSWERS)[number];
export const MAX_LLM_FAULT_DELAY_MS = 120_000;
export const DEFAULT_STAND_IN_API_KEY = 'sk-devnet-llm-stand-in';
const MAX_BODY_BYTES = 64 * 1024;
const OVERSIZED_BYTES = 256 * 1024;
const DEFAULT_COUNT = 10;
const MAX_COUNT = 50;

/**
 * INVALID_NAMES answers only entries no DNS label rule accepts; MIXED_NAMES answers valid names
 * among invalid, repeated and differently-cased ones, and more of them than asked.
 */
export interface LlmFaults {
  readonly delayMs: number;
  readonly answer: LlmFaultAnswer;
}

export const NO_LLM_FAULTS: LlmFaults = { delayMs: 0, answer: 'NORMAL' };

export interface LlmStandInOptions {
  /** The only key accepted; default DEFAULT_STAND_IN_API_KEY. */
  readonly apiKey?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** `created` in answers; defaults to the system clock. */
  readonly now?: () => Date;
}

export interface LlmRequestSeen {
  readonly path: string;
  /** The Authorization header as received, or null. */
  readonly authorization: string | null;
  /** The parsed JSON body (null when it was not JSON). */
  readonly body: unknown;
  /** The idea line of the last user message, or null. */
  readonly idea: string | null;
}

export interface DevnetLlm {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** <url>/v1, the value for LLM_BASE_URL. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Every request to a completions path, oldest first (the most recent 1,000). */
  readonly requests: readonly LlmRequestSeen[];
  waitForRequest(
    predicate?: (request: LlmRequestSeen) => boolean,
    timeoutMs?: number,
  ): Promise<LlmRequestSeen>;
  readonly faults: LlmFaults;
  /** Changes the named switches and keeps the others. */
  setFaults(faults: Partial<LlmFaults>): void;
  clearFaults(): void;
  stop(): Promise<void>;
}

export async function startDevnetLlm(options: LlmStandInOptions = {}): Promise<DevnetLlm> {
  const apiKey = options.apiKey ?? DEFAULT_STAND_IN_API_KEY;
  if (!/^[\x21-\x7e]{1,1024}$/.test(apiKey))
    throw new RangeError('apiKey must be 1-1024 printable ASCII characters without spaces');
  const state: StandInState = {
    apiKey,
    now: options.now ?? (() => new Date()),
    faults: NO_LLM_FAULTS,
    seen: new Inbox('LLM request'),
    timers: new Set(),
    sequence: 0,
  };
  const server = await serveOnLoopback(standInApp(state), options.port ?? 0);
  return {
    url: server.url,
    baseUrl: `${server.url}/v1`,
    apiKey,
    requests: state.seen.items,
    waitForRequest: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      state.seen.waitFor(predicate, timeoutMs),
    get faults() {
      return state.faults;
    },
    setFaults: (changes) => {
      state.faults = checkFaults({ ...state.faults, ...changes });
    },
    clearFaults: () => {
      state.faults = NO_LLM_FAULTS;
    },
    async stop() {
      for (const timer of state.timers) clearTimeout(timer);
      state.seen.close();
      await server.stop();
    },
  };
}

interface StandInState {
  readonly apiKey: string;
  readonly now: () => Date;
  faults: LlmFaults;
  readonly seen: Inbox<LlmRequestSeen>;
  /** Delayed answers still to send; cleared on stop. */
  readonly timers: Set<NodeJS.Timeout>;
  sequence: number;
}

function standInApp(state: StandInState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: MAX_BODY_BYTES }));
  const completions = (req: Request, res: Response): void => {
    const question = readQuestion(req.body);
    state.seen.record({
      path: req.path,
      authorization: req.get('authorization') ?? null,
      body: req.body ?? null,
      idea: question?.idea ?? null,
    });
    if (state.faults.delayMs === 0) return answer(state, req, res, question);
    const timer = setTimeout(() => {
      state.timers.delete(timer);
      if (!res.destroyed) answer(state, req, res, question);
    }, state.faults.delayMs);
    state.timers.add(timer);
  };
  app.post('/v1/chat/completions', completions);
  app.post('/chat/completions', completions);
  app.use((_req: Request, res: Response) => {
    res
      .status(404)
      .json(openAiError('Unknown request URL.', 'invalid_request_error', 'unknown_url'));
  });
  app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res
      .status(400)
      .json(
        openAiError(
          'We could not parse the JSON body of your request.',
          'invalid_request_error',
          null,
        ),
      );
  });
  return app;
}

interface Question {
  readonly model: string;
  readonly idea: string;
  readonly count: number;
}

/** The request as a names question, or null when it is not a valid json_schema chat request. */
function readQuestion(body: unknown): Question | null {
  if (!isRecord(body) || typeof body.model !== 'string' || !Array.isArray(body.messages))
    return null;
  const format = body.response_format;
  if (
    !isRecord(format) ||
    format.type !== 'json_schema' ||
    !isRecord(format.json_schema) ||
    !isRecord(format.json_schema.schema)
  )
    return null;
  const user = body.messages
    .filter(
      (message) =>
        isRecord(message) && message.role === 'user' && typeof message.content === 'string',
    )
    .at(-1) as { content: string } | undefined;
  if (user === undefined) return null;
  const lines = user.content.split('\n');
  const idea =
    lines.find((line) => line.startsWith(PROMPT_LINES.idea))?.slice(PROMPT_LINES.idea.length) ??
    user.content;
  const wanted = Number(
    lines.find((line) => line.startsWith(PROMPT_LINES.count))?.slice(PROMPT_LINES.count.length),
  );
  const count =
    Number.isInteger(wanted) && wanted >= 1 ? Math.min(wanted, MAX_COUNT) : DEFAULT_COUNT;
  return { model: body.model, idea, count };
}

function answer(state: StandInState, req: Request, res: Response, question: Question | null): void {
  const presented = req.get('authorization') ?? '';
  if (presented !== `Bearer ${state.apiKey}`) {
    // As the real API does, the refusal quotes the key presented: a client must never pass it on.
    res
      .status(401)
      .json(
        openAiError(
          `Incorrect API key provided: ${presented.replace(/^Bearer /, '')}.`,
          'invalid_request_error',
          'invalid_api_key',
        ),
      );
    return;
  }
  const { answer: fault } = state.faults;
  if (fault === 'RESET') {
    req.socket.destroy();
    return;
  }
  if (fault === 'HTTP_500') {
    res
      .status(500)
      .json(
        openAiError(
          `The server had an error processing the request (authorization: ${presented}).`,
          'server_error',
          null,
        ),
      );
    return;
  }
  if (question === null) {
    res
      .status(400)
      .json(
        openAiError(
          'Expected model, messages with a user message, and response_format json_schema.',
          'invalid_request_error',
          null,
        ),
      );
    return;
  }
  if (fault === 'MALFORMED_JSON') {
    res
      .status(200)
      .type('application/json')
      .send('{"id": "chatcmpl-devnet", "choices": [{"message": ');
    return;
  }
  if (fault === 'OVERSIZED') return sendOversized(res);
  state.sequence += 1;
  res.status(200).json(completion(state, question, fault));
}

function completion(
  state: StandInState,
  question: Question,
  fault: LlmFaultAnswer,
): Record<string, unknown> {
  const names = standInNames(question.idea, question.count);
  const contentByFault: Partial<Record<LlmFaultAnswer, string>> = {
    MALFORMED_CONTENT: 'Here are some names: ' + names.join(', '),
    INVALID_NAMES: JSON.stringify({
      names: [
        'Not A Label',
        '-leading',
        'trailing-',
        'dotted.name',
        'x'.repeat(64),
        'ab--cd',
        42,
        null,
      ],
    }),
    MIXED_NAMES: JSON.stringify({
      names: [
        'Bad Name!',
        ...names.map((name) => name.toUpperCase()),
        ...names,
        'tail-',
        ...standInNames(`${question.idea} extra`, question.count),
      ],
    }),
  };
  const refusal = fault === 'REFUSAL' ? 'I can’t help with that request.' : null;
  const content = refusal === null ? (contentByFault[fault] ?? JSON.stringify({ names })) : null;
  return {
    id: `chatcmpl-devnet-${state.sequence}`,
    object: 'chat.completion',
    created: Math.floor(state.now().getTime() / 1000),
    model: question.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  };
}

/** A valid answer padded past any sane bound, streamed in chunks without a Content-Length. */
function sendOversized(res: Response): void {
  res.status(200).type('application/json');
  res.write('{"padding": "');
  const chunk = 'x'.repeat(16 * 1024);
  for (let written = 0; written < OVERSIZED_BYTES; written += chunk.length) res.write(chunk);
  res.end('", "choices": [{"message": {"content": "{\\"names\\": [\\"padded\\"]}"}}]}');
}

function openAiError(message: string, type: string, code: string | null): Record<string, unknown> {
  return { error: { message, type, param: null, code } };
}

function checkFaults(candidate: Record<string, unknown>): LlmFaults {
  const { delayMs, answer: fault } = candidate;
  if (
    !Number.isInteger(delayMs) ||
    (delayMs as number) < 0 ||
    (delayMs as number) > MAX_LLM_FAULT_DELAY_MS
  ) {
    throw new RangeError(`delayMs must be an integer in 0..${MAX_LLM_FAULT_DELAY_MS}`);
  }
  if (!(LLM_FAULT_ANSWERS as readonly unknown[]).includes(fault))
    throw new RangeError(`answer must be one of ${LLM_FAULT_ANSWERS.join(', ')}`);
  return { delayMs: delayMs as number, answer: fault as LlmFaultAnswer };
}
