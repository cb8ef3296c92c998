import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createOwner } from '../../src/actions/principals.js';
import { openApp, productProjections, type App } from '../../src/app.js';
import { ReplicaFollower } from '../../src/engine/pg/follower.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { readAllRows } from '../../src/engine/store.js';
import { findCommand } from '../../src/engine/command-log.js';
import { isDomainError } from '../../src/errors.js';
import { getAgentByName } from '../../src/projections/principal-queries.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { pgRaw, pgScratch, pgSkip, type PgScratch } from '../helpers/pg.js';
import { assertRebuildEqual } from '../helpers/read-models.js';
import { plainAgent } from '../../testkit/agents.js';

/**
 * A node's copy of a PostgreSQL tenant (engine/replica.ts): several copies — each a real App with its own
 * worker thread, as several `colony serve` nodes have — write through one store and stay one chain.
 */
const TENANT = 'acme';
const OWNER = { actor: 'user:owner' };
const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function copyOf(scratch: PgScratch): App {
  const dir = tempDir();
  const app = openApp({ dataDir: dir.dir, durability: 'normal', store: { url: scratch.url, tenant: TENANT } });
  cleanups.push(() => (app.engine.close(), dir.cleanup()));
  return app;
}

const agent = (app: App, ownerId: number, name: string, commandId?: string) =>
  plainAgent(app, ownerId, name, { ...OWNER, ...(commandId && { commandId }) });

async function storeOf(scratch: PgScratch): Promise<PgEventStore> {
  const store = await PgEventStore.open(scratch.url, { projections: productProjections });
  cleanups.push(() => store.close());
  return store;
}

function scratch(): PgScratch {
  const s = pgScratch();
  cleanups.push(() => s.drop());
  return s;
}

/** Two copies of the tenant, then agent alpha written through a: rows the store has and b has not brought in. */
function bBehindA() {
  const s = scratch();
  const a = copyOf(s);
  const ownerId = createOwner(a, 'owner', OWNER).userId;
  const b = copyOf(s);
  const seen = b.engine.head();
  agent(a, ownerId, 'alpha');
  return { s, a, b, ownerId, seen };
}

describe('copies of a PostgreSQL tenant writing through it', { skip: pgSkip }, () => {
  it('keeps one chain: each write brings in the other copies’ rows first, ids never collide', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const b = copyOf(s);
    const first = agent(a, ownerId, 'alpha');
    const second = agent(b, ownerId, 'beta'); // b has not seen alpha yet: its write takes it in first
    assert.equal(second.agentId, first.agentId + 1);
    assert.ok(getAgentByName(b.engine.db, ownerId, 'alpha'), 'b took in a’s agent under the lock');
    a.engine.catchUp();
    assert.deepEqual(a.engine.head(), b.engine.head());
    const store = await storeOf(s);
    assert.deepEqual(await store.head(TENANT), a.engine.head());
    assert.deepEqual(await store.readRows(TENANT, 0, 1000), readAllRows(a.engine.db, { limit: 1000 }));
    assert.equal((await store.verify(TENANT)).get(TENANT)?.ok, true);
    await assertRebuildEqual(store, TENANT);
  });

  it('writes nothing on either side for a refused command, and lets the next writer in at once', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const b = copyOf(s);
    agent(a, ownerId, 'alpha');
    const head = a.engine.head();
    const bHead = b.engine.head();
    assert.throws(
      () => agent(b, ownerId, 'alpha'),
      (e) => isDomainError(e),
    );
    const store = await storeOf(s);
    assert.deepEqual(await store.head(TENANT), head, 'the store has nothing of the refused command');
    assert.deepEqual(b.engine.head(), bHead, 'nor has the copy: its catch-up rolled back with it');
    const started = Date.now();
    agent(a, ownerId, 'gamma');
    assert.ok(Date.now() - started < 2000, 'the refused command released the tenant’s lock');
  });

  it('answers a retried command id on another copy with the first result, even one that decided nothing', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const b = copyOf(s);
    const noop = { ...OWNER, commandId: 'cmd-noop-1' };
    assert.deepEqual(a.engine.transact(noop, () => 'ran').value, 'ran');
    assert.deepEqual(
      b.engine.transact(noop, () => 'ran again'),
      { events: [], value: undefined, duplicate: true },
    );
    agent(a, ownerId, 'alpha', 'cmd-alpha-1');
    const first = (await (await storeOf(s)).committed(TENANT, 'cmd-alpha-1'))!;
    assert.throws(
      () => agent(b, ownerId, 'alpha', 'cmd-alpha-1'),
      (e) => isDomainError(e) && e.code === 'ErrDuplicateCommand',
    );
    assert.equal(first[0]?.type, 'AgentRegistered');
    assert.equal(b.engine.head().position, a.engine.head().position, 'the retry appended nothing');
  });

  it('commits a group-commit batch to the store in one transaction', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const before = a.engine.group.stats.batches;
    await Promise.all(['one', 'two', 'three'].map((n) => a.engine.group.run(() => agent(a, ownerId, `agent-${n}`))));
    assert.equal(a.engine.group.stats.batches - before, 1);
    const store = await storeOf(s);
    assert.deepEqual(await store.head(TENANT), a.engine.head());
  });

  it('refuses to write from a copy that is no longer on the store’s chain', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const head = a.engine.head();
    const raw = await pgRaw(s);
    try {
      await raw.query('ALTER TABLE es_events DISABLE TRIGGER USER');
      await raw.query(`UPDATE es_events SET hash = repeat('f', 64) WHERE tenant = $1 AND position = $2`, [
        TENANT,
        head.position,
      ]);
    } finally {
      await raw.end();
    }
    assert.throws(
      () => agent(a, ownerId, 'alpha'),
      (e) => isDomainError(e) && e.code === 'ErrChainMismatch' && /differs from the store at position/.test(e.message),
    );
    assert.deepEqual(a.engine.head(), head, 'nothing was written to the copy');
  });

  it('refuses to write over a store that lost rows, naming the first one missing', async () => {
    const { s, a, b, ownerId, seen } = bBehindA();
    const head = a.engine.head();
    // a's rows removed behind the store's back (its append-only triggers off); its recorded head stays.
    const raw = await pgRaw(s);
    try {
      await raw.query('ALTER TABLE es_events DISABLE TRIGGER USER');
      await raw.query('DELETE FROM es_events WHERE tenant = $1 AND position > $2', [TENANT, seen.position]);
    } finally {
      await raw.end();
    }
    assert.throws(
      () => agent(b, ownerId, 'beta'),
      (e) =>
        isDomainError(e) &&
        e.code === 'ErrChainBroken' &&
        e.message.includes(`position ${seen.position + 1} is not there`) &&
        e.message.includes(`up to ${head.position}`),
    );
    assert.deepEqual(b.engine.head(), seen, 'nothing was written to the copy');
    assert.deepEqual(await (await storeOf(s)).head(TENANT), head, 'nor to the store');
  });

  it('brings a command in whole when a page of rows would cut it, with the same record as the store’s', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const b = copyOf(s);
    const ids = ['cmd-one', 'cmd-two', 'cmd-three'];
    ids.forEach((id, i) => agent(a, ownerId, `agent-${i}`, id)); // several events each
    assert.ok(a.engine.head().position - b.engine.head().position > ids.length * 2);
    b.engine.catchUp(2); // pages of 2 rows: every command would be cut
    assert.deepEqual(b.engine.head(), a.engine.head());
    for (const id of ids) assert.deepEqual(findCommand(b.engine.db, id), findCommand(a.engine.db, id), id);
    assert.ok(findCommand(b.engine.db, 'cmd-two')!.lastPosition! > findCommand(b.engine.db, 'cmd-two')!.firstPosition!);
  });

  it('delivers another copy’s commits through the follower, woken by NOTIFY, on the bus', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const b = copyOf(s);
    const seen: string[] = [];
    const sub = b.engine.bus.events$.subscribe((e) => seen.push(e.type));
    const follower = await ReplicaFollower.start(s.url, TENANT, b.engine, { pollMs: 600_000 });
    try {
      agent(a, ownerId, 'alpha');
      const deadline = Date.now() + 5000;
      while (!seen.includes('AgentRegistered') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(seen.includes('AgentRegistered'), seen.join());
      assert.deepEqual(b.engine.head(), a.engine.head());
    } finally {
      sub.unsubscribe();
      await follower.stop();
    }
  });

  it('reports a follower that cannot bring rows in once, not on every poll, and once more when it can', async () => {
    const { s, a, b, seen } = bBehindA();
    // a's rows removed behind the store's back (its append-only triggers off), kept aside to put back.
    const raw = await pgRaw(s);
    cleanups.push(() => raw.end());
    await raw.query('ALTER TABLE es_events DISABLE TRIGGER USER');
    await raw.query('CREATE TEMP TABLE kept AS SELECT * FROM es_events WHERE tenant = $1 AND position > $2', [
      TENANT,
      seen.position,
    ]);
    await raw.query('DELETE FROM es_events WHERE tenant = $1 AND position > $2', [TENANT, seen.position]);
    const reports: string[] = [];
    const follower = await ReplicaFollower.start(s.url, TENANT, b.engine, {
      pollMs: 10,
      onError: (e, f) => reports.push(`${isDomainError(e) ? e.code : String(e)} after ${f.attempts}`),
      onRecovered: (f) => reports.push(`recovered after ${f.attempts}`),
    });
    try {
      const polls = async (n: number) => {
        for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 10));
      };
      await polls(30);
      assert.deepEqual(reports, ['ErrChainBroken after 1'], 'the first failure alone, though every poll failed');
      assert.deepEqual(b.engine.head(), seen, 'nothing was brought in');
      await raw.query('INSERT INTO es_events SELECT * FROM kept');
      const deadline = Date.now() + 5000;
      while (reports.length < 2 && Date.now() < deadline) await polls(1);
      assert.match(reports[1] ?? 'no recovery reported', /^recovered after (\d+)$/);
      assert.ok(Number(/\d+/.exec(reports[1]!)![0]) >= 5, `it failed on many polls: ${reports[1]}`);
      assert.deepEqual(b.engine.head(), a.engine.head());
      await polls(5);
      assert.equal(reports.length, 2, 'recovery is reported once');
    } finally {
      await follower.stop();
    }
  });
});

describe('copies of a tenant across a rolling upgrade of its read models', { skip: pgSkip }, () => {
  it('go on writing after a rebuild of the same code, and refuse to write once newer code rebuilt them', async () => {
    const s = scratch();
    const a = copyOf(s);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    const same = await storeOf(s);
    await same.rebuild(['channels'], TENANT); // e.g. `colony rebuild --store` with this code
    agent(a, ownerId, 'alpha');
    // A node of newer code: its channels projection has a higher version, so it rebuilds that read model.
    const bumped = productProjections.map((p) => (p.name === 'channels' ? { ...p, version: p.version + 1 } : p));
    const newer = await PgEventStore.open(s.url, { projections: bumped });
    cleanups.push(() => newer.close());
    await newer.readModels.prepare(newer.pool, TENANT);
    const head = a.engine.head();
    assert.throws(
      () => agent(a, ownerId, 'beta'),
      (e) => isDomainError(e) && e.code === 'ErrReadModelNewer' && /channels/.test(e.message),
    );
    assert.deepEqual(await same.head(TENANT), head, 'the older node wrote nothing');
    assert.throws(
      () => copyOf(s),
      (e) => isDomainError(e) && e.code === 'ErrReadModelNewer',
      'a node of older code does not start on them either',
    );
  });
});
