import { createReadStream, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createProject } from '../src/actions/projects.js';
import { createOwner, registerAgent, speakerOf } from '../src/actions/principals.js';
import { setAgentProject } from '../src/actions/runs/agent-controls.js';
import { presentWebapp } from '../src/actions/webapps.js';
import { openApp } from '../src/app.js';
import { createHttpApp, listen } from '../src/http/server.js';
import { createMcpContext } from '../src/mcp/context.js';
import { buildToolRegistry } from '../src/mcp/tools/index.js';
import { figure, type Figure } from './util.js';

/**
 * apps_static_per_s: a static web app's file served by `/apps/<id>/…` (every directory from / opened
 * without following a symlink, the file served from that descriptor, CSP and the other headers), in
 * requests per second under autocannon; baseline = a bare node:http server that stats and streams the
 * same file by path — what a server that trusts its paths does — measured in the same run with the same
 * connections. The walk costs a few opens per request; this says what that is worth next to the rest.
 */
interface Result {
  requests: { average: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<Result>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

async function load(url: string, seconds: number): Promise<number> {
  const r = await autocannon({ url, connections: 10, duration: seconds });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return r.requests.average;
}

export async function benchApps(dir: string, o: { seconds: number }): Promise<{ staticPerS: Figure }> {
  const data = join(dir, 'apps');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data, durability: 'normal' });
  const owner = createOwner(app, 'bench-owner', { actor: 'system' });
  const agent = registerAgent(
    app,
    {
      name: 'builder',
      ownerId: owner.userId,
      model: 'none',
      systemPrompt: 'You build a site.',
      toolScope: ['webapp_present'],
      tier: 'supervised',
      command: null,
      parentId: null,
      spawnDepth: 0,
    },
    { actor: 'system' },
  );
  const actor = { actor: 'system' };
  const by = speakerOf(app, `user-${owner.userId}`);
  const project = createProject(app, by, { name: 'site', path: '', gitUrl: '', description: '' }, actor).project;
  mkdirSync(join(project.path, 'web', 'assets'), { recursive: true });
  const file = join(project.path, 'web', 'assets', 'app.js');
  writeFileSync(join(project.path, 'web', 'index.html'), '<script src="assets/app.js"></script>');
  writeFileSync(file, `console.log(${JSON.stringify('x'.repeat(4000))});\n`);
  setAgentProject(app, owner.userId, agent.agentId, 'site', 'bench', actor);
  const presented = presentWebapp(
    app,
    speakerOf(app, `agent-${agent.agentId}`),
    { target: 'web/index.html', title: 'Site', description: '', kind: '', agentId: '' },
    actor,
  );
  const http = createHttpApp(app.engine, createMcpContext(app, buildToolRegistry()));
  const colony = await listen(http.app, '127.0.0.1', 0);
  const bare: Server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/javascript', 'Content-Length': String(statSync(file).size) });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const port = (s: Server) => (s.address() as { port: number }).port;
  try {
    const url = `http://127.0.0.1:${port(colony)}/apps/${presented.app.appId}/assets/app.js`;
    const base = `http://127.0.0.1:${port(bare)}/`;
    await load(url, 1); // warm both
    await load(base, 1);
    const [value, baseline] = [await load(url, o.seconds), await load(base, o.seconds)];
    return { staticPerS: figure(value, 'requests/s', baseline) };
  } finally {
    await new Promise((r) => colony.close(r));
    await new Promise((r) => bare.close(r));
    await http.close();
    app.engine.close();
  }
}
