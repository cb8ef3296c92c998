import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createOwner } from '../../../src/actions/principals.js';
import { openApp, productProjections, type App } from '../../../src/app.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import type { PgPrimary } from '../../../src/engine/pg/primary.js';
import { WriteRecorder } from '../../../src/engine/replica-record.js';
import { readAllRows } from '../../../src/engine/store.js';
import { isDomainError } from '../../../src/errors.js';
import { tempDir } from '../../../testkit/temp-dir.js';
import { pgScratch, pgSkip, type PgScratch } from '../../helpers/pg.js';
import { spawnScript } from '../../helpers/processes.js';
import { assertRebuildEqual } from '../../helpers/read-models.js';
import { plainAgent } from '../../../testkit/agents.js';

/**
 * Copies of one tenant (each a real App with its own worker thread, as `colony serve` nodes are) whose
 * writes are decided on the copy and sent in one round trip (pg/one-trip.ts): a write that lost a race to
 * the other copy runs again under the lock, and everything ends as if the writes had been serial.
 */
const TENANT = 'acme';
const OWNER = { actor: 'user:owner' };
const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function copyOf(s: PgScratch): App {
  const dir = tempDir();
  const app = openApp({ dataDir: dir.dir, durability: 'normal', store: { url: s.url, tenant: TENANT } });
  cleanups.push(() => (app.engine.close(), dir.cleanup()));
  return app;
}

const agent = (app: App, ownerId: number, name: string, commandId?: string) =>
  plainAgent(app, ownerId, name, { ...OWNER, ...(commandId && { commandId }) });

/** The store's chain verifies, both copies equal it row for row, its read models equal a rebuild. */
async function assertOne(s: PgScratch, copies: App[]): Promise<void> {
  const store = await PgEventStore.open(s.url, { projections: productProjections });
  try {
    assert.equal((await store.verify(TENANT)).get(TENANT)?.ok, true);
    const rows = await store.readRows(TENANT, 0, 10_000);
    for (const c of copies) {
      c.engine.catchUp();
      assert.deepEqual(readAllRows(c.engine.db, { limit: 10_000 }), rows);
    }
    await assertRebuildEqual(store, TENANT);
  } finally {
    await store.close();
  }
}

const COPY_NODE = fileURLToPath(new URL('../../helpers/pg-copy-node.ts', import.meta.url));

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  for (const start = Date.now(); !check(); await new Promise((r) => setTimeout(r, 25)))
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

const stats = (app: App) => (app.engine.replica!.primary as PgPrimary).stats();

describe('writes decided on the copy, sent in one round trip', { skip: pgSkip }, () => {
  it('lands each of two copies’ concurrent writes exactly once: the loser of a race runs again under the lock', async () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const b = copyOf(s);
    const names = Array.from({ length: 24 }, (_, i) => `agent-${i}`);
    const results = await Promise.all(
      names.map((n, i) => {
        const app = i % 2 ? b : a;
        return app.engine.group.run(() => agent(app, ownerId, n), { retry: true });
      }),
    );
    // Commands outside a batch too (the CLI's, the API's): b is behind a's last batch.
    agent(a, ownerId, 'solo-a');
    agent(b, ownerId, 'solo-b');
    const ids = results.map((r) => r.agentId);
    assert.equal(new Set(ids).size, names.length, 'every agent got its own id');
    // Counted per caller that ran again (a batch's callers each do) and per write that lost, on each side.
    assert.ok(a.engine.group.stats.conflicts + b.engine.group.stats.conflicts > 0, 'the copies raced');
    assert.ok(stats(a).conflicts + stats(b).conflicts > 0);
    await assertOne(s, [a, b]);
    const registered = readAllRows(a.engine.db, { limit: 10_000 }).filter((r) => r.type === 'AgentRegistered');
    assert.equal(registered.length, names.length + 2, 'each command landed once');
  });

  it('answers a keyed command retried on the other copy alike, after that copy lost a race', async () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const b = copyOf(s);
    agent(b, ownerId, 'beta'); // a is behind now: its next write decides on a stale copy
    const first = agent(a, ownerId, 'alpha', 'cmd-alpha');
    const before = stats(a).conflicts;
    assert.ok(before >= 1, 'a lost the race to b and ran again under the lock');
    assert.throws(
      () => agent(b, ownerId, 'alpha', 'cmd-alpha'),
      (e) => isDomainError(e) && e.code === 'ErrDuplicateCommand',
    );
    const noop = { ...OWNER, commandId: 'cmd-noop' };
    assert.equal(a.engine.transact(noop, () => 'ran').value, 'ran');
    // b's copy has no record of it and the chain did not move: the store's command record is the conflict.
    assert.deepEqual(
      b.engine.transact(noop, () => 'again'),
      { events: [], value: undefined, duplicate: true },
    );
    assert.equal(first.agentId > 0, true);
    await assertOne(s, [a, b]);
  });

  it('falls back to running the projections on PostgreSQL when a recorded write does not change the rows it did on the copy', async () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const upTo = WriteRecorder.prototype.upTo;
    // The divergence forced: every recorded write claims one row more than it changed.
    WriteRecorder.prototype.upTo = function (last) {
      return upTo.call(this, last).map((w) => ({ ...w, changes: w.changes + 1 }));
    };
    try {
      agent(a, ownerId, 'alpha');
      await a.engine.group.run(() => agent(a, ownerId, 'beta'), { retry: true });
    } finally {
      WriteRecorder.prototype.upTo = upTo;
    }
    agent(a, ownerId, 'gamma');
    await assertOne(s, [a]);
  });

  it('holds the lock for one round trip on one copy: no write of a lone node loses a race', async () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    for (let i = 0; i < 5; i++) await a.engine.group.run(() => agent(a, ownerId, `agent-${i}`), { retry: true });
    const { writes, optimistic, conflicts, fallbacks } = stats(a);
    assert.equal(conflicts, 0);
    assert.equal(fallbacks, 0, 'the copy’s read-model writes stood on PostgreSQL');
    assert.equal(optimistic, writes, 'every write went in one round trip');
    await assertOne(s, [a]);
  });

  it('keeps the store whole when a node writing beside another is killed -9 in the middle of its writes', async () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const nodes = ['n1', 'n2'].map((name) => {
      const dir = tempDir();
      const child = spawnScript(COPY_NODE, [s.url, TENANT, dir.dir, name, String(ownerId)]);
      cleanups.push(() => (child.proc.kill('SIGKILL'), dir.cleanup()));
      return child;
    });
    const wrote = (i: number) => nodes[i]!.lines.filter((l) => l.startsWith('wrote')).length;
    await until(() => wrote(0) >= 3 && wrote(1) >= 3, 60_000, 'both nodes writing');
    nodes[0]!.proc.kill('SIGKILL'); // wherever it is: deciding, in its round trip, or committing its copy
    await nodes[0]!.exit;
    const before = wrote(1);
    await until(() => wrote(1) >= before + 3, 30_000, 'the other node writing on');
    nodes[1]!.proc.kill('SIGKILL');
    await nodes[1]!.exit;
    agent(a, ownerId, 'after'); // no lock was left behind
    await assertOne(s, [a]);
    const names = readAllRows(a.engine.db, { limit: 10_000 })
      .filter((r) => r.type === 'AgentRegistered')
      .map((r) => (JSON.parse(r.data) as { name: string }).name);
    assert.equal(new Set(names).size, names.length, 'no agent twice');
    for (const [i, node] of ['n1', 'n2'].entries()) {
      const answered = Number(
        nodes[i]!.lines.filter((l) => l.startsWith('wrote'))
          .at(-1)!
          .split(' ')[1],
      );
      for (let k = 0; k < answered; k++) assert.ok(names.includes(`${node}-${k}`), `${node}-${k} was answered`);
    }
  });
});
