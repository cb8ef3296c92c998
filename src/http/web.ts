import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Express } from 'express';

/**
 * The console: the built Svelte app in web/dist, served at `/` by the same process. Every
 * page is the one index.html (the app routes by path); assets are content-hashed, so cached for good.
 * Content-Security-Policy `default-src 'self'`: no inline script or style, no other origin, no framing —
 * whatever an agent wrote can only ever be text.
 */
export const WEB_DIST = fileURLToPath(new URL('../../web/dist', import.meta.url));
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const PAGES =
  /^\/(?:$|goals(?:\/\d+)?\/?$|approvals\/?$|agents(?:\/[a-z][a-z0-9-]*)?\/?$|requests\/?$|audit\/?$|oauth\/?$)/;
/** Paths that belong to the server, not the console: an unknown one there stays a JSON 404. */
const SERVER_PATHS =
  /^\/(?:api|mcp|oauth|apps|assets|\.well-known|health|ready|metrics|authorize|token|register)(?:\/|$)/;

export function mountConsole(app: Express, dist = WEB_DIST): void {
  const secure = (res: express.Response): void => {
    res.set({
      'Content-Security-Policy': CONSOLE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Cross-Origin-Opener-Policy': 'same-origin',
    });
  };
  app.use(
    '/assets',
    (_req, res, next) => {
      secure(res);
      next();
    },
    express.static(join(dist, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: false }),
  );
  const page = (status: number) => (_req: express.Request, res: express.Response) => {
    secure(res);
    const index = join(dist, 'index.html');
    if (!existsSync(index)) {
      res
        .status(503)
        .type('text/plain')
        .send('The console is not built: run `npm run build:web` (npm install does it), then reload.\n');
      return;
    }
    res.status(status).set('Cache-Control', 'no-cache').type('html').send(readFileSync(index));
  };
  app.get(PAGES, page(200));
  // Any other path a browser asks for (`/nope`, `/goals/abc`) is the console's own not-found page, with
  // status 404; programs (no text/html in Accept) and the server's own paths keep the JSON 404.
  app.get(/^\//, (req, res, next) => {
    if (SERVER_PATHS.test(req.path) || req.accepts(['json', 'html']) !== 'html') return next();
    page(404)(req, res);
  });
}
