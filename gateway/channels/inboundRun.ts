// What the three inbound channel routes share: the raw body and headers as the platform sent them,
// and running one persisted mutation as the `channel` actor, logged. The policy subgraph decides
// what a message means; this module only carries it there and back.
import type { Request } from 'express';
import { AppError } from '../../core/errors';
import type { Actor, ChannelActorKind } from '../../platform/actor';
import type { Logger } from '../../platform/log';
import { appErrorFromGraphQL } from '../rest/graphqlErrors';
import type { GatewayExecutor } from '../subscriptions/escalations';

/** The persisted mutations the channel routes run (gateway/rest/documents/). */
export const CHANNEL_DOCUMENTS = [
  'receiveChatMessage',
  'receiveWebhookRequest',
  'confirmEmailBinding',
] as const;
export type ChannelDocument = (typeof CHANNEL_DOCUMENTS)[number];

/** What the policy subgraph answers for one inbound message. */
export interface InboundResult {
  outcome: string;
  reason: string | null;
  pollRef: string | null;
  state: string | null;
  answer: string;
}

/** Runs a channel mutation as the platform's actor and logs its outcome. */
export type RunInbound = (
  channel: ChannelActorKind,
  document: ChannelDocument,
  variables: Record<string, unknown>,
) => Promise<InboundResult>;

export function header(req: Request, name: string): string | string[] | undefined {
  return req.headers[name];
}

/** The body exactly as received (express.raw); signatures cover these bytes. */
export function rawText(req: Request): string {
  return Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
}

export function inboundRunner(deps: {
  readonly documents: ReadonlyMap<string, string>;
  readonly execute: GatewayExecutor;
  readonly log: Logger;
}): RunInbound {
  return async (channel, document, variables) => {
    const actor: Actor = { kind: 'channel', channel };
    const result = await deps.execute(actor, deps.documents.get(document)!, variables);
    if (result.errors && result.errors.length > 0)
      throw appErrorFromGraphQL(result.errors as never);
    const data = result.data?.[document] as InboundResult | undefined;
    if (data === undefined) throw new AppError('INTERNAL_ERROR', 'The operation returned no data.');
    deps.log.info(
      { channel, outcome: data.outcome, reason: data.reason, pollRef: data.pollRef },
      'channel message',
    );
    return data;
  };
}
