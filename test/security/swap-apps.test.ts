import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setAgentProject } from '../../src/actions/runs/agent-controls.js';
import { createProject } from '../../src/actions/projects.js';
import { speakerOf } from '../../src/actions/principals.js';
import { ok } from '../helpers/calls.js';
import { runtimeFixture } from '../helpers/runtime.js';
import { startSwapping } from '../helpers/swapper.js';

/**
 * Issue 31, item 1 (critical): a static web app's files are served through a descriptor opened without
 * following any symlink. The attack, over real HTTP: an agent presents `index.html` from its project,
 * then swaps the directory `p/` with a symlink to Colony's data directory in a tight loop (renameat2
 * RENAME_EXCHANGE) while fetching `/apps/<id>/p/secrets.key`. A server that checks the real path and then
 * opens the path again hands out the master key; Colony must never answer with anything but the decoy
 * `p/secrets.key` of the project or a 404.
 */
delete process.env.COLONY_ALLOWED_ROOTS;

/** The whole answer as bytes off the socket: a length that disagrees with the body must not hide what was sent. */
const fetchRaw = (url: string): Promise<{ status: number; body: Buffer; raw: Buffer }> =>
  new Promise((resolve, reject) => {
    const u = new URL(url);
    const socket = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(raw.toString('latin1'))?.[1]),
        body: raw.subarray(split + 4),
        raw,
      });
    });
    socket.write(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`);
  });

describe('a static web app while its directories are swapped for symlinks', () => {
  it('never serves a file from outside the project (the data dir, /etc), only the project file or 404', async (t) => {
    const f = await runtimeFixture({ agentTools: ['webapp_present'] });
    t.after(() => f.close());
    const actor = { actor: 'user:owner' };
    const dir = createProject(
      f.app,
      speakerOf(f.app, `user-${f.ownerId}`),
      { name: 'site', path: '', gitUrl: '', description: '' },
      actor,
    ).project.path;
    writeFileSync(join(dir, 'index.html'), '<p>site</p>');
    mkdirSync(join(dir, 'p'));
    writeFileSync(join(dir, 'p', 'secrets.key'), 'DECOY');
    writeFileSync(join(dir, 'p', 'passwd'), 'DECOY');
    symlinkSync(f.app.dataDir, join(dir, 'to-data'));
    symlinkSync('/etc', join(dir, 'to-etc'));
    setAgentProject(f.app, f.ownerId, f.agentId, 'site', 'owner', actor);
    const agent = await f.connect(f.agentToken);
    const id = ((await ok(agent, 'webapp_present', { target: 'index.html' })).app as { app_id: string }).app_id;
    const masterKey = readFileSync(join(f.app.dataDir, 'secrets.key'));
    const passwd = readFileSync('/etc/passwd');

    const statuses = new Map<string, number>();
    for (const [link, file, secret] of [
      ['to-data', 'secrets.key', masterKey],
      ['to-etc', 'passwd', passwd],
    ] as const) {
      const swapper = await startSwapping(join(dir, 'p'), join(dir, link));
      try {
        for (let i = 0; i < 400; i++) {
          const r = await fetchRaw(`${f.base}/apps/${id}/p/${file}`);
          statuses.set(`${r.status}`, (statuses.get(`${r.status}`) ?? 0) + 1);
          assert.ok(!r.raw.includes(secret), `request ${i} for p/${file} was served from outside the project`);
          assert.ok(r.status === 404 || r.body.toString() === 'DECOY', `${r.status} ${r.body.toString()}`);
        }
      } finally {
        await swapper.stop();
      }
    }
    assert.ok((statuses.get('200') ?? 0) > 0, `the project's own file was still served: ${[...statuses]}`);
    // The symlink itself, asked for directly, is refused too (even one pointing inside would be).
    assert.equal((await fetchRaw(`${f.base}/apps/${id}/to-data/secrets.key`)).status, 404);
  });
});
