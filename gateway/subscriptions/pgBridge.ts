// One LISTEN connection per gateway replica: PostgreSQL NOTIFY (sent on commit only, so nobody sees
// a rolled-back change) becomes a local event. NOTIFY is not durable: after a reconnect the bridge
// calls onResync so subscribers can re-read current state instead of trusting the gap.
import { Client } from 'pg';
import type { Logger } from '../../platform/log';

export const BRIDGE_RECONNECT_MIN_MS = 100;
export const BRIDGE_RECONNECT_MAX_MS = 5_000;

export interface PgNotifyBridgeOptions {
  connectionString: string;
  channels: readonly string[];
  onNotification(channel: string, payload: unknown): void;
  onResync(): void;
  log: Logger;
}

export class PgNotifyBridge {
  private client: Client | null = null;
  private stopped = false;
  private reconnectDelayMs = BRIDGE_RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private connectedOnce = false;

  constructor(private readonly options: PgNotifyBridgeOptions) {
    for (const channel of options.channels) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel))
        throw new Error(`invalid NOTIFY channel name ${channel}`);
    }
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.options.connectionString,
      application_name: 'gateway-listen',
    });
    client.on('notification', (message) => {
      let payload: unknown = message.payload;
      try {
        payload = message.payload ? JSON.parse(message.payload) : null;
      } catch {
        this.options.log.warn({ channel: message.channel }, 'NOTIFY payload is not JSON');
      }
      this.options.onNotification(message.channel, payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    await client.connect();
    for (const channel of this.options.channels) await client.query(`LISTEN ${channel}`);
    this.client = client;
    this.reconnectDelayMs = BRIDGE_RECONNECT_MIN_MS;
    if (this.connectedOnce) this.options.onResync();
    this.connectedOnce = true;
  }

  private lost(client: Client, error: Error): void {
    if (this.client !== client || this.stopped) return;
    this.client = null;
    this.options.log.warn({ err: error.message }, 'LISTEN connection lost; reconnecting');
    client.removeAllListeners();
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, BRIDGE_RECONNECT_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect().catch((error: Error) => {
        this.options.log.warn({ err: error.message }, 'LISTEN reconnect failed');
        this.scheduleReconnect();
      });
    }, delay);
  }

  get connected(): boolean {
    return this.client !== null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}
