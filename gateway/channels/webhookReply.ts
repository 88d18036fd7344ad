// POST /channels/webhook/reply: an owner's signed reply to a webhook notice. The edge checks only
// that the signature headers are there: the binding's secret is sealed in the policy subgraph,
// which verifies the signature over the raw body and decides.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../../channels/webhook';
import { AppError } from '../../core/errors';
import { header, rawText, type RunInbound } from './inboundRun';

export function webhookReply(run: RunInbound): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const timestamp = header(req, WEBHOOK_TIMESTAMP_HEADER);
      const signature = header(req, WEBHOOK_SIGNATURE_HEADER);
      if (typeof timestamp !== 'string' || typeof signature !== 'string')
        throw new AppError('CHANNEL_REQUEST_UNVERIFIED');
      const result = await run('webhook', 'receiveWebhookRequest', {
        timestamp,
        signature,
        rawBody: rawText(req),
      });
      res.json(result);
    } catch (error) {
      next(error);
    }
  };
}
