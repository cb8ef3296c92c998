/**
 * Runs in a fresh process so its RSS is the server's alone: `node --expose-gc --import tsx
 * bench/mcp-sessions-child.ts DIR`. Serves `/mcp` (mountMcp with the caps `colony serve` would use: the
 * COLONY_MCP_SESSIONS_* variables, else the defaults) on a loopback port, with an owner and an agent
 * whose tool scope is `whoami` only — the attacker of the flood. Talks to its parent over IPC:
 * sends {base, ownerToken, agentToken} once listening; answers 'rss' with {rss, sessions} after a full
 * GC (so garbage not yet collected does not count as retained); exits on 'stop'.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createOwner, registerAgent } from '../src/actions/principals.js';
import { openApp } from '../src/app.js';
import { mountMcp } from '../src/http/mcp.js';
import { listen } from '../src/http/server.js';
import { createMcpContext } from '../src/mcp/context.js';
import { buildToolRegistry } from '../src/mcp/tools/index.js';
import { closeServer } from './serve.js';

const dir = process.argv[2];
const gc = (globalThis as { gc?: () => void }).gc;
if (!dir || !process.send || !gc)
  throw new Error('usage: node --expose-gc --import tsx mcp-sessions-child.ts DIR (with an IPC channel)');

const app = openApp({ dataDir: dir, durability: 'normal' });
const owner = createOwner(app, 'owner', { actor: 'system' });
const agent = registerAgent(
  app,
  {
    name: 'flooder',
    ownerId: owner.userId,
    model: 'bench',
    systemPrompt: 'You only ask who you are.',
    toolScope: ['whoami'],
    tier: 'supervised',
    command: null,
    parentId: null,
    spawnDepth: 0,
  },
  { actor: 'user:owner' },
);
const ctx = createMcpContext(app, buildToolRegistry());
const http = express();
const routes = mountMcp(http, ctx);
const server = await listen(http, '127.0.0.1', 0);
process.send({
  base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  ownerToken: owner.token,
  agentToken: agent.token,
});

process.on('message', (m) => {
  if (m === 'rss') {
    // Two passes: the first may only finalize what the second frees.
    gc();
    gc();
    process.send!({ rss: process.memoryUsage().rss, sessions: routes.sessionCount() });
  } else if (m === 'stop') {
    void routes
      .close()
      .then(() => closeServer(server))
      .then(() => {
        ctx.audit.close();
        app.engine.close();
        process.disconnect();
      });
  }
});
