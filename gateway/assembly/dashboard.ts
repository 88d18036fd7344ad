// The owner and analyst dashboard (docs/dashboard.md): the single-page app Vite builds into
// dist/dashboard, served at `/` under a strict Content-Security-Policy (every script and style
// bundled, nothing inline, no other origin). index.html is never cached; the hashed assets are
// immutable. The page holds no business logic: it reaches the service through /graphql only.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Express, type Response } from 'express';
import { projectRoot } from '../../platform/paths';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

function secureHeaders(res: Response): void {
  res.setHeader('content-security-policy', DASHBOARD_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
}

/** GET / (index.html, no-store) and GET /assets/* (hashed, immutable); absent before a build. */
export function serveDashboard(
  app: Express,
  root = path.join(projectRoot(), 'dist', 'dashboard'),
): void {
  const indexFile = path.join(root, 'index.html');
  app.get(['/', '/index.html'], (_req, res, next) => {
    if (!existsSync(indexFile)) {
      next();
      return;
    }
    secureHeaders(res);
    res.setHeader('cache-control', 'no-store');
    res.type('text/html; charset=utf-8').send(readFileSync(indexFile, 'utf8'));
  });
  app.use(
    '/assets',
    express.static(path.join(root, 'assets'), {
      index: false,
      fallthrough: true,
      etag: false,
      setHeaders: (res) => {
        secureHeaders(res);
        res.setHeader('cache-control', 'public, max-age=31536000, immutable');
      },
    }),
  );
}
