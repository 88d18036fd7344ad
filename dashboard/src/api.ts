// The dashboard's only way to the service: POST /graphql and graphql-ws on the same path, with the
// owner's bearer held in memory. Sign-in uses the owner SIWE routes (docs/auth.md).
import { createClient, type Client } from 'graphql-ws';

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: unknown = null,
  ) {
    super(message);
  }
}

/** The codes that mean "sign in again": the page then drops everything it shows. */
export const SESSION_CODES = new Set(['SESSION_INVALID', 'AUTH_REQUIRED']);

export interface Session {
  readonly token: string;
  readonly address: string;
  readonly expiresAtMs: number;
}

type Expired = () => void;

export class Api {
  private socket: Client | null = null;

  constructor(
    readonly session: Session | null,
    private readonly onExpired: Expired,
  ) {}

  async query<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.session) headers.authorization = `Bearer ${this.session.token}`;
    const response = await fetch('/graphql', {
      method: 'POST',
      headers,
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json().catch(() => ({}))) as {
      data?: T;
      errors?: { message: string; extensions?: { code?: string; details?: unknown } }[];
      code?: string;
      message?: string;
    };
    const first = body.errors?.[0];
    const code = first?.extensions?.code ?? body.code;
    if (code && SESSION_CODES.has(code) && this.session) this.onExpired();
    if (first || !response.ok || !body.data)
      throw new ApiError(
        code ?? 'REQUEST_FAILED',
        first?.message ?? body.message ?? `The service answered ${response.status}.`,
        first?.extensions?.details ?? null,
      );
    return body.data;
  }

  /** Calls `listener` each time the websocket is (re)connected and acknowledged. */
  onConnected(listener: () => void): () => void {
    return this.client().on('connected', listener);
  }

  private client(): Client {
    this.socket ??= createClient({
      url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
      connectionParams: this.session ? { authorization: `Bearer ${this.session.token}` } : {},
      retryAttempts: 0,
      on: {
        closed: (event) => {
          if ((event as CloseEvent).code === 4403) this.onExpired();
        },
      },
    });
    return this.socket;
  }

  subscribe<T>(
    query: string,
    variables: Record<string, unknown>,
    next: (data: T) => void,
    error: (e: ApiError) => void,
  ): () => void {
    return this.client().subscribe<T>(
      { query, variables },
      {
        next: (message) => {
          if (message.data) next(message.data as T);
          const failure = message.errors?.[0];
          if (failure)
            error(new ApiError(String(failure.extensions?.code ?? 'ERROR'), failure.message));
        },
        error: (e) =>
          error(
            new ApiError(
              'CONNECTION_LOST',
              e instanceof Error ? e.message : 'The live feed closed.',
            ),
          ),
        complete: () => undefined,
      },
    );
  }

  close(): void {
    void this.socket?.dispose();
    this.socket = null;
  }
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const answer = (await response.json().catch(() => ({}))) as T & {
    code?: string;
    message?: string;
  };
  if (!response.ok)
    throw new ApiError(
      answer.code ?? 'REQUEST_FAILED',
      answer.message ?? `HTTP ${response.status}`,
    );
  return answer;
}
