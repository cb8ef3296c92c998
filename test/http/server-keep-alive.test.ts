import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { after, before, it } from 'node:test';
import { openApp, type App } from '../../src/app.js';
import { createHttpApp, HEADERS_TIMEOUT_MS, KEEP_ALIVE_MS, listen } from '../../src/http/server.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * An idle keep-alive connection outlives Node's 5 s default (clients and proxies idle up to 60 s and
 * would reuse a socket the server had closed): one raw socket, a request, 6 s of silence, a second
 * request on the same socket.
 */
const scratch = tempDir('colony-keep-alive-');
let app: App;
let server: Server;

before(async () => {
  app = openApp({ dataDir: scratch.dir });
  server = await listen(createHttpApp(app.engine).app, '127.0.0.1', 0);
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  app.engine.close();
  scratch.cleanup();
});

/** Sends one GET /health on the socket and resolves with the response head and body once the body is complete. */
function health(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const [head, body] = text.split('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1]);
      if (body !== undefined && Buffer.byteLength(body) >= length) done(() => resolve(text));
    };
    const onClose = () => done(() => reject(new Error(`the server closed the connection; got: ${text}`)));
    const done = (fn: () => void) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      fn();
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${(server.address() as { port: number }).port}\r\n\r\n`);
  });
}

it(
  'keeps an idle connection open for 75 s, with headersTimeout above it, and serves it again after 6 s',
  { timeout: 20_000 },
  async () => {
    assert.deepEqual([server.keepAliveTimeout, server.headersTimeout], [KEEP_ALIVE_MS, HEADERS_TIMEOUT_MS]);
    assert.ok(HEADERS_TIMEOUT_MS > KEEP_ALIVE_MS && KEEP_ALIVE_MS > 60_000);
    const socket = connect((server.address() as { port: number }).port, '127.0.0.1');
    try {
      const first = await health(socket);
      assert.match(first, /^HTTP\/1\.1 200 /);
      assert.match(first, /keep-alive: timeout=75/i);
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      assert.match(await health(socket), /^HTTP\/1\.1 200 [\s\S]*"status":"ok"/);
    } finally {
      socket.destroy();
    }
  },
);
