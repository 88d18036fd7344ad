// GET and POST /channels/email/confirm: the link mailed to a new email binding. The GET only shows
// a page with a Confirm button (mail scanners and link previews open links; they must not
// confirm), and the button's POST runs the confirmation as the `email` channel actor, once.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { RunInbound } from './inboundRun';

const BINDING = /^chb_[0-9a-f]{24}$/;
const CODE = /^[0-9a-f]{24}$/;

function page(res: Response, status: number, body: string): void {
  res
    .status(status)
    .type('html')
    .set('content-security-policy', "default-src 'none'; form-action 'self'")
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><title>Spend Control</title></head><body>${body}</body></html>`,
    );
}

function linkOf(source: Record<string, unknown>): { binding: string; code: string } | null {
  const { binding, code } = source;
  if (typeof binding !== 'string' || typeof code !== 'string') return null;
  if (!BINDING.test(binding) || !CODE.test(code.toLowerCase())) return null;
  return { binding, code: code.toLowerCase() };
}

export function emailConfirmPage(): RequestHandler {
  return (req: Request, res: Response) => {
    const link = linkOf(req.query as Record<string, unknown>);
    if (link === null) return page(res, 400, '<p>This confirmation link is malformed.</p>');
    page(
      res,
      200,
      `<p>Send Spend Control notices to this address?</p><form method="post" action="/channels/email/confirm">` +
        `<input type="hidden" name="binding" value="${link.binding}"><input type="hidden" name="code" value="${link.code}">` +
        '<button type="submit">Confirm</button></form>',
    );
  };
}

export function emailConfirm(run: RunInbound): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const link = linkOf((req.body ?? {}) as Record<string, unknown>);
      if (link === null) return page(res, 400, '<p>This confirmation link is malformed.</p>');
      const result = await run('email', 'confirmEmailBinding', {
        bindingId: link.binding,
        code: link.code,
      });
      page(res, result.outcome === 'LINKED' ? 200 : 400, `<p>${result.answer}</p>`);
    } catch (error) {
      next(error);
    }
  };
}
