import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createProject } from '../../src/actions/projects.js';
import { speakerOf } from '../../src/actions/principals.js';
import { configureSandbox, setAgentProject } from '../../src/actions/runs/agent-controls.js';
import { sharesHostLoopback } from '../../src/actions/webapps/loopback.js';
import type { NetworkMode } from '../../src/events/sandbox.js';
import { effectiveSandbox } from '../../src/runtime/confine.js';
import { ok, refusedWithText } from '../helpers/calls.js';
import { runtimeFixture, type RuntimeFixture } from '../helpers/runtime.js';

/**
 * A `port` web app is proxied to 127.0.0.1:<port> of the host. An agent confined in a network of its own
 * (network none or allow) serves nothing there, so a port it presented could only be another service of
 * the host — here a loopback HTTP server standing in for PostgreSQL's or Redis's admin page. Through a real
 * MCP Client and real HTTP: such an agent's webapp_present of a port is ErrPortNotAllowed and writes
 * nothing; the owner may still present that port for it; and the proxy checks again on every request, so
 * a port presented while the agent had network host stops answering (403) once it is confined.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
delete process.env.COLONY_PORT;
const actor = { actor: 'user:owner' };

let f: RuntimeFixture;
let owner: Client;
let mallory: Client;
let malloryId: number;
let service: Server;
let port: number;
let hits = 0;

before(async () => {
  f = await runtimeFixture({ agentTools: ['webapp_present', 'webapp_list'] });
  owner = await f.connect(f.ownerToken);
  createProject(
    f.app,
    speakerOf(f.app, `user-${f.ownerId}`),
    { name: 'site', path: '', gitUrl: '', description: '' },
    actor,
  );
  const m = f.addRunner('mallory', 'cat >/dev/null', {}, { toolScope: ['webapp_present', 'webapp_list'] });
  malloryId = m.agentId;
  mallory = await f.connect(m.token);
  setAgentProject(f.app, f.ownerId, malloryId, 'site', 'owner', actor);
  service = createServer((_req, res) => {
    hits += 1;
    res.end('host-only admin page');
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  port = (service.address() as { port: number }).port;
});
after(async () => {
  await f.close();
  service.close();
});

const network = (mode: NetworkMode) =>
  configureSandbox(f.app, f.ownerId, malloryId, { network: mode, sandbox: 'on' }, 'owner', actor);
const get = (appId: string) => fetch(`${f.base}/apps/${appId}/`);

describe("an agent in a network of its own cannot hand out the host's loopback services", () => {
  it('webapp_present of a port by an agent with network none or allow is ErrPortNotAllowed and writes nothing', async () => {
    for (const mode of ['allow', 'none'] as const) {
      network(mode);
      await refusedWithText(
        f,
        mallory,
        'webapp_present',
        { target: String(port) },
        `Error: agent mallory runs in a network of its own (its network is not host), so nothing it serves is on this host's port ${port} — only the owner may present that port (or set: colony agents runtime mallory --network host).`,
        'ErrPortNotAllowed',
      );
    }
    assert.equal(hits, 0);
  });

  it('the owner may still present that port for the agent, and it is served', async () => {
    const presented = await ok(owner, 'webapp_present', { target: String(port), agent_id: 'mallory' });
    const res = await get((presented.app as { app_id: string }).app_id);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'host-only admin page');
  });

  it('a port presented under network host is refused when served once the agent is confined (403, nothing reaches the port)', async () => {
    network('host');
    const second = createServer((_req, res) => void res.end('its own dev server'));
    await new Promise<void>((resolve) => second.listen(0, '127.0.0.1', resolve));
    try {
      const target = String((second.address() as { port: number }).port);
      const appId = ((await ok(mallory, 'webapp_present', { target })).app as { app_id: string }).app_id;
      assert.equal((await get(appId)).status, 200);
      network('allow');
      const res = await get(appId);
      assert.equal(res.status, 403);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'ErrPortNotAllowed');
      network('host');
      assert.equal((await get(appId)).status, 200, 'served again once it shares the loopback again');
    } finally {
      second.close();
    }
  });

  it("reads an agent's network as the runtime does (effectiveSandbox), defaults included", () => {
    const saved = { sandbox: process.env.COLONY_SANDBOX, network: process.env.COLONY_NETWORK };
    try {
      for (const envSandbox of [undefined, 'on', 'off', 'bogus'])
        for (const envNetwork of [undefined, 'none', 'allow', 'host', 'bogus'])
          for (const sandbox of [null, 'on', 'off'] as const)
            for (const net of [null, 'none', 'allow', 'host'] as const) {
              const o = { ...overrides, sandbox, network: net };
              for (const [k, v] of [
                ['COLONY_SANDBOX', envSandbox],
                ['COLONY_NETWORK', envNetwork],
              ] as const)
                if (v === undefined) delete process.env[k];
                else process.env[k] = v;
              const box = effectiveSandbox(o);
              assert.equal(sharesHostLoopback(o), box.sandbox === 'off' || box.network === 'host', JSON.stringify(o));
            }
    } finally {
      for (const [k, v] of [
        ['COLONY_SANDBOX', saved.sandbox],
        ['COLONY_NETWORK', saved.network],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});

const overrides = { allowHosts: null, memoryMb: null, cpuSec: null, pids: null, fileMb: null, diskMb: null };
