import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import express from 'express';
import { CONSOLE_CSP, mountConsole } from '../../src/http/web.js';
import { colonyLive } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * How the console's files are served (http/web.ts), through the real `colony serve` (what `npm start`
 * runs) on a real socket: the app's page at `/` and at each of its paths, with the CSP that keeps every
 * request on this origin; content-hashed assets cached for good; anything else 404; and a clear 503,
 * never a blank page, when the app has not been built.
 */
describe('the console is served by colony serve', () => {
  it('answers the app at / and its paths with a same-origin CSP, the hashed assets immutable, the rest 404', async (t) => {
    const scratch = tempDir('colony-web-');
    t.after(() => scratch.cleanup());
    const serve = colonyLive(['serve', '--port', '0', '--data', scratch.dir]);
    t.after(() => serve.stop());
    const url = (await serve.waitFor(/^Colony listening on /, 'stderr')).match(/http:\/\/\S+/)![0];
    assert.match(await serve.waitFor(/^Console: /, 'stderr'), new RegExp(`^Console: ${url}/ `));

    const index = await fetch(`${url}/`);
    assert.equal(index.status, 200);
    assert.equal(index.headers.get('content-security-policy'), CONSOLE_CSP);
    assert.match(CONSOLE_CSP, /^default-src 'self';/);
    assert.match(CONSOLE_CSP, /frame-ancestors 'none'/);
    assert.equal(index.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(index.headers.get('cache-control'), 'no-cache');
    const html = await index.text();
    assert.match(html, /<div id="app">/);
    // Every script and stylesheet is one of this origin's own files: nothing from a CDN, nothing inline.
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.length >= 2 && refs.every((r) => r.startsWith('/assets/')), refs.join(' '));
    assert.doesNotMatch(html, /<script>(?!<\/script>)|<style>/);

    for (const path of [
      '/goals',
      '/goals/12',
      '/approvals',
      '/agents',
      '/agents/doc-gardener',
      '/requests',
      '/audit',
    ]) {
      const page = await fetch(`${url}${path}`);
      assert.deepEqual([path, page.status, await page.text()], [path, 200, html]);
    }
    const script = refs.find((r) => r.endsWith('.js'))!;
    const asset = await fetch(`${url}${script}`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type') ?? '', /javascript/);
    assert.match(asset.headers.get('cache-control') ?? '', /max-age=31536000, immutable/);
    assert.ok((await asset.text()).length > 10_000);

    for (const path of ['/nope', '/goals/x', '/assets/missing.js', '/agents/Bad_Name', '/index.html']) {
      assert.equal((await fetch(`${url}${path}`)).status, 404, path);
    }
    assert.deepEqual((await (await fetch(`${url}/health`)).json()).status, 'ok');
  });

  it('says how to build the app when web/dist is missing (503), and serves it once built', async (t) => {
    const scratch = tempDir('colony-web-dist-');
    t.after(() => scratch.cleanup());
    const app = express();
    mountConsole(app, scratch.dir);
    const server = app.listen(0, '127.0.0.1');
    t.after(() => server.close());
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const missing = await fetch(`${base}/goals`);
    assert.deepEqual(
      [missing.status, await missing.text()],
      [503, 'The console is not built: run `npm run build:web` (npm install does it), then reload.\n'],
    );
    assert.equal(missing.headers.get('content-security-policy'), CONSOLE_CSP);
    mkdirSync(join(scratch.dir, 'assets'));
    writeFileSync(join(scratch.dir, 'index.html'), '<!doctype html><div id="app"></div>');
    assert.equal(await (await fetch(`${base}/goals`)).text(), '<!doctype html><div id="app"></div>');
  });
});
