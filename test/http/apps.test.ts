import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { configureSandbox, setAgentProject, stopAgent } from '../../src/actions/runs/agent-controls.js';
import { createProject } from '../../src/actions/projects.js';
import { getMessage } from '../../src/projections/channel-queries.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { setServedUrl } from '../../src/public-url.js';
import { callTool, textOf } from '../helpers/mcp.js';
import { runtimeFixture, type RuntimeFixture } from '../helpers/runtime.js';
import { speakerOf } from '../../src/actions/principals.js';
import { ok } from '../helpers/calls.js';

/**
 * Web apps over real HTTP sockets, and their path policy: the card lands in the
 * goal channel of the presenting agent's running run; `/apps/<id>/` serves a static app sandboxed (CSP,
 * nosniff, no cookies) with the files next to it, and re-checks containment on every request (a symlink
 * planted later is 404); a port app is proxied to 127.0.0.1 only — whatever the Host header, the request
 * line or the path say — without Authorization or Cookie; 502 when nothing listens; 404 once its agent
 * is stopped.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
delete process.env.COLONY_PORT;
const WEBAPP_TOOLS = ['webapp_present', 'webapp_list'];
const actor = { actor: 'user:owner' };

interface Hit {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
/** A loopback server that records what reaches it. */
async function recorder(): Promise<{ server: Server; port: number; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hits.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === '/login-first') return void res.writeHead(302, { Location: '/login' }).end();
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Set-Cookie': 'session=upstream',
        'Content-Security-Policy': "img-src 'self'",
      });
      res.end(JSON.stringify({ url: req.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, hits };
}

let f: RuntimeFixture;
let owner: Client;
let builder: { agentId: number; client: Client };
let dir: string;
let outside: string;
let upstream: Awaited<ReturnType<typeof recorder>>;
let decoy: Awaited<ReturnType<typeof recorder>>;
before(async () => {
  f = await runtimeFixture({ agentTools: WEBAPP_TOOLS });
  owner = await f.connect(f.ownerToken);
  dir = createProject(
    f.app,
    speakerOf(f.app, `user-${f.ownerId}`),
    { name: 'site', path: '', gitUrl: '', description: '' },
    actor,
  ).project.path;
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'colony-outside-')));
  writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET');
  mkdirSync(join(dir, 'web', 'img'), { recursive: true });
  writeFileSync(join(dir, 'web', 'index.html'), '<script src="app.js"></script><p>hello</p>');
  writeFileSync(join(dir, 'web', 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'web', 'img', 'index.html'), '<p>gallery</p>');
  writeFileSync(join(dir, 'web', '.env'), 'TOKEN=x');
  const a = f.addRunner('builder', 'cat >/dev/null; sleep 30', {}, { toolScope: WEBAPP_TOOLS });
  setAgentProject(f.app, f.ownerId, a.agentId, 'site', 'owner', actor);
  setAgentProject(f.app, f.ownerId, f.agentId, 'site', 'owner', actor);
  // Both serve on the host's loopback (network host): a confined agent presents no port (test/security/port-apps.test.ts).
  for (const agentId of [a.agentId, f.agentId])
    configureSandbox(f.app, f.ownerId, agentId, { network: 'host' }, 'owner', actor);
  builder = { agentId: a.agentId, client: await f.connect(a.token) };
  [upstream, decoy] = [await recorder(), await recorder()];
});
after(async () => {
  await f.close();
  for (const r of [upstream, decoy]) r.server.close();
  rmSync(outside, { recursive: true, force: true });
});

const present = async (client: Client, args: Record<string, unknown>): Promise<string> =>
  ((await ok(client, 'webapp_present', args)).app as { app_id: string }).app_id;

/** A request exactly as written: any path (absolute-form too), any Host header. */
function raw(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const port = Number(new URL(f.base).port);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers }, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the card lands in the goal channel of the running run', () => {
  it('an agent working on a goal posts its card there', async () => {
    const goal = await ok(owner, 'create_goal', {
      title: 'Ship the site',
      description: 'Build and show the landing page.',
    });
    const run = f.reactor.wake({
      agentId: builder.agentId,
      source: 'manual',
      goalId: goal.goal_id as number,
      by: `user-${f.ownerId}`,
    });
    assert.equal(run.run.status, 'running');
    const body = await ok(builder.client, 'webapp_present', { target: 'web/index.html', title: 'Site' });
    const channel = getGoal(f.app.engine.db, goal.goal_id as number)!.channelId;
    const card = getMessage(f.app.engine.db, body.message_id as number)!;
    assert.deepEqual([card.channelId, card.fromName, card.body], [channel, 'builder', '🖥️ Web app: Site']);
    assert.deepEqual(body.posted_in, { channel_id: channel, channel: card.channelName, goal: true });
    assert.match(card.channelName, /^goal-/);
  });
});

describe('static apps', () => {
  let id: string;
  before(async () => {
    id = await present(builder.client, { target: 'web/index.html' });
  });

  it("serves the page sandboxed, with nosniff, no-referrer and no cookie; the files next to it; a directory's index.html", async () => {
    const page = await raw(`/apps/${id}/`);
    assert.equal(page.status, 200);
    assert.equal(page.body, '<script src="app.js"></script><p>hello</p>');
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    const csp = String(page.headers['content-security-policy']);
    assert.match(
      csp,
      /^sandbox allow-scripts; default-src 'self' 'unsafe-inline' data:; connect-src 'none';.*frame-ancestors 'self'$/,
    );
    assert.doesNotMatch(csp, /allow-same-origin/, "an opaque origin: the page cannot reach Colony's storage");
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['set-cookie'], undefined);
    const script = await raw(`/apps/${id}/app.js`, { authorization: 'Bearer nothing' });
    assert.deepEqual(
      [script.status, script.headers['content-type'], script.body],
      [200, 'text/javascript; charset=utf-8', 'console.log(1)'],
    );
    assert.equal((await raw(`/apps/${id}/index.html`)).body, page.body);
    assert.equal((await raw(`/apps/${id}/img/`)).body, '<p>gallery</p>');
    assert.equal((await raw(`/apps/${id}/`, {}, 'HEAD')).status, 200);
  });

  it('redirects /apps/<id> to /apps/<id>/; refuses writes; 404 for hidden files, "..", missing files and unknown ids', async () => {
    const bare = await raw(`/apps/${id}?v=1`);
    assert.deepEqual([bare.status, bare.headers.location], [308, `/apps/${id}/?v=1`]);
    assert.equal((await raw(`/apps/${id}/`, {}, 'POST', 'x')).status, 405);
    for (const path of [
      `/apps/${id}/.env`,
      `/apps/${id}/%2e%2e/web/index.html`,
      `/apps/${id}/..%2f..%2fCLAUDE.md`,
      `/apps/${id}/nope.js`,
      `/apps/${id}//etc/passwd`,
      `/apps/${'0'.repeat(32)}/`,
      '/apps/not-an-id/',
      `/apps/${id}/%E0%A4%A`,
    ]) {
      assert.equal((await raw(path)).status, 404, path);
    }
  });

  it('a symlink planted after presenting that points outside the project is refused (404), file or directory', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'web', 'late.txt'));
    symlinkSync(outside, join(dir, 'web', 'ext'));
    for (const path of [`/apps/${id}/late.txt`, `/apps/${id}/ext/secret.txt`]) {
      const r = await raw(path);
      assert.equal(r.status, 404, path);
      assert.ok(!r.body.includes('TOP SECRET'));
    }
    unlinkSync(join(dir, 'web', 'index.html'));
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'web', 'index.html'));
    assert.equal((await raw(`/apps/${id}/`)).status, 404, 'the entry page itself, swapped for an escaping symlink');
    unlinkSync(join(dir, 'web', 'index.html'));
    writeFileSync(join(dir, 'web', 'index.html'), '<p>back</p>');
    assert.equal((await raw(`/apps/${id}/`)).body, '<p>back</p>');
  });

  it('a url app is a link: never served under /apps', async () => {
    const link = await present(builder.client, { target: 'https://example.com/' });
    assert.equal((await raw(`/apps/${link}/`)).status, 404);
  });
});

describe('port apps', () => {
  let id: string;
  before(async () => {
    id = await present(builder.client, { target: String(upstream.port), title: 'Dev server' });
  });

  it('proxies to 127.0.0.1:<port> with the prefix stripped, without Authorization or Cookie; no Set-Cookie comes back', async () => {
    const r = await raw(`/apps/${id}/echo?x=1`, {
      authorization: `Bearer ${f.ownerToken}`,
      cookie: 'a=b',
      'x-custom': 'kept',
    });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { url: '/echo?x=1' });
    const hit = upstream.hits.at(-1)!;
    assert.equal(hit.headers.authorization, undefined);
    assert.equal(hit.headers.cookie, undefined);
    assert.equal(hit.headers.host, `127.0.0.1:${upstream.port}`);
    assert.equal(hit.headers['x-custom'], 'kept');
    assert.equal(hit.headers['x-forwarded-prefix'], `/apps/${id}`);
    assert.equal(r.headers['set-cookie'], undefined);
    assert.match(String(r.headers['content-security-policy']), /img-src 'self', sandbox allow-scripts/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    const posted = await raw(`/apps/${id}/submit`, { 'content-type': 'text/plain' }, 'POST', 'hello');
    assert.equal(posted.status, 200);
    assert.deepEqual([upstream.hits.at(-1)!.method, upstream.hits.at(-1)!.body], ['POST', 'hello']);
    const moved = await raw(`/apps/${id}/login-first`);
    assert.deepEqual(
      [moved.status, moved.headers.location],
      [302, `/apps/${id}/login`],
      'a root redirect stays under the prefix',
    );
  });

  it('a Host header, an absolute-form request line or a path naming another host still reaches 127.0.0.1:<port> only', async () => {
    const before = upstream.hits.length;
    const trick = `127.0.0.1:${decoy.port}`;
    assert.equal((await raw(`/apps/${id}/a`, { host: trick })).status, 200);
    assert.equal((await raw(`http://${trick}/apps/${id}/b`)).status, 200);
    assert.equal((await raw(`/apps/${id}//${trick}/c`)).status, 200);
    assert.equal((await raw(`/apps/${id}/http://${trick}/d`)).status, 200);
    assert.deepEqual(
      upstream.hits.slice(before).map((h) => [h.url, h.headers.host]),
      [
        ['/a', `127.0.0.1:${upstream.port}`],
        ['/b', `127.0.0.1:${upstream.port}`],
        [`/${trick}/c`, `127.0.0.1:${upstream.port}`],
        [`/http://${trick}/d`, `127.0.0.1:${upstream.port}`],
      ],
    );
    assert.equal(
      (await raw(`http://example.com/apps/${id}/e`, { host: 'example.com' })).status,
      403,
      'a foreign Host is refused outright on loopback',
    );
    assert.equal(upstream.hits.length, before + 4);
    assert.equal(decoy.hits.length, 0, 'the other loopback server never saw a request');
  });

  it('answers 502 when nothing listens on the port', async () => {
    const closed = await recorder();
    await new Promise((resolve) => closed.server.close(resolve));
    const dead = await present(builder.client, { target: String(closed.port) });
    const r = await raw(`/apps/${dead}/`);
    assert.equal(r.status, 502);
    assert.deepEqual(JSON.parse(r.body), {
      error: { code: 'ErrBadGateway', message: `nothing answers on 127.0.0.1:${closed.port}` },
    });
  });

  it("refuses Colony's own port when serve recorded it", async () => {
    setServedUrl(f.base);
    const own = new URL(f.base).port;
    const { body } = await callTool(builder.client, 'webapp_present', { target: own });
    assert.equal(body.message, "Error: cannot proxy the orchestrator's own port.");
  });

  it('after stopAgent the port app answers 404 and is listed as retired; the static app stays; presenting it again revives it', async () => {
    const worker = await f.connect(f.agentToken);
    stopAgent(f.app, f.ownerId, builder.agentId, 'owner', 'done for today', actor);
    assert.equal((await raw(`/apps/${id}/echo`)).status, 404);
    const listed = await ok(owner, 'webapp_list', { project: 'site' });
    const row = (listed.apps as { app_id: string; retired: boolean }[]).find((a) => a.app_id === id)!;
    assert.equal(row.retired, true);
    assert.match(
      textOf((await callTool(owner, 'webapp_list', { project: 'site' })).result),
      /- \*\*Dev server\*\* — kind=port, target=`\d+` \[retired: its agent was stopped/,
    );
    assert.equal(
      (await raw(`/apps/${await present(worker, { target: 'web/index.html' })}/`)).status,
      200,
      'a static app outlives its agent',
    );
    const { body } = await callTool(builder.client, 'webapp_present', { target: String(upstream.port) });
    assert.equal(body.error_code, 'ErrAgentStopped');
    assert.equal(
      await present(worker, { target: String(upstream.port) }),
      id,
      'the same registration, now presented by a running agent',
    );
    assert.equal((await raw(`/apps/${id}/again`)).status, 200);
  });
});
