import assert from 'node:assert/strict';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createOwner } from '../../../src/actions/principals.js';
import { plainAgent } from '../../../testkit/agents.js';
import { openApp, productProjections, type App } from '../../../src/app.js';
import { COPIES_DIR, copyName } from '../../../src/engine/pg/copy-file.js';
import { openTenantCopy } from '../../../src/engine/pg/copy-open.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import { readAllRows } from '../../../src/engine/store.js';
import { getAgentByName } from '../../../src/projections/principal-queries.js';
import { sqliteTables } from '../../helpers/read-models.js';
import { tempDir } from '../../../testkit/temp-dir.js';
import { isDomainError } from '../../../src/errors.js';
import { pgRaw, pgScratch, pgSkip, type PgScratch } from '../../helpers/pg.js';

/**
 * A process's copy of a PostgreSQL tenant is a file under its data dir (engine/pg/copy-file.ts): a restart
 * resumes it, bringing in only what the store committed since; a copy that is not on the store's chain
 * is thrown away and copied again; each process of a data dir holds a copy of its own.
 */
const TENANT = 'acme/../../escape';
const OWNER = { actor: 'user:owner' };
const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function scratch(): PgScratch {
  const s = pgScratch();
  cleanups.push(() => s.drop());
  return s;
}

function dataDir(): string {
  const d = tempDir();
  cleanups.push(() => d.cleanup());
  return d.dir;
}

/** Another data dir with the same keys (another machine of the team), without the copies. */
function sibling(dir: string): string {
  const other = dataDir();
  cpSync(dir, other, { recursive: true, filter: (src) => !src.includes(`/${COPIES_DIR}`) });
  return other;
}

const open = (s: PgScratch, dir: string): App =>
  openApp({ dataDir: dir, durability: 'normal', store: { url: s.url, tenant: TENANT } });

function agents(app: App, ownerId: number, names: string[]): void {
  for (const name of names) plainAgent(app, ownerId, name, OWNER);
}

async function storeHead(s: PgScratch) {
  const store = await PgEventStore.open(s.url);
  try {
    return await store.head(TENANT);
  } finally {
    await store.close();
  }
}

describe('a node’s copy of a PostgreSQL tenant in a file', { skip: pgSkip }, () => {
  it('lives under the data dir, named by schema and tenant hash, and a restart brings in only the rows committed since', async () => {
    const s = scratch();
    const dir = dataDir();
    const a = open(s, dir);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    agents(a, ownerId, ['alpha', 'beta']);
    const file = a.engine.db.name;
    assert.equal(file, join(dir, COPIES_DIR, `${copyName(s.url, TENANT)}.db`));
    assert.match(copyName(s.url, TENANT), new RegExp(`^${s.schema}-[0-9a-f]{16}$`));
    const left = a.engine.head();
    a.engine.close();
    // Another machine of the team writes meanwhile.
    const b = open(s, sibling(dir));
    agents(b, ownerId, ['gamma', 'delta', 'epsilon']);
    const head = b.engine.head();
    b.engine.close();
    const again = open(s, dir);
    cleanups.push(() => again.engine.close());
    assert.equal(again.engine.db.name, file, 'the same file');
    assert.equal(again.engine.caughtUpOnOpen, head.position - left.position, 'only the rows after its head');
    assert.ok(head.position - left.position < left.position);
    assert.deepEqual(again.engine.head(), head);
    assert.deepEqual(await storeHead(s), head);
    assert.ok(getAgentByName(again.engine.db, ownerId, 'epsilon'), 'the new rows are projected');
  });

  it('gives each process of one data dir a copy of its own, and a restarted one takes its own back', () => {
    const s = scratch();
    const dir = dataDir();
    const a = open(s, dir);
    createOwner(a, 'owner', OWNER);
    const b = open(s, dir);
    assert.notEqual(b.engine.db.name, a.engine.db.name);
    assert.equal(b.engine.caughtUpOnOpen, a.engine.head().position, 'a new copy copies everything');
    const second = b.engine.db.name;
    b.engine.close();
    const c = open(s, dir);
    assert.equal(c.engine.db.name, second, 'the free slot, with its copy');
    assert.equal(c.engine.caughtUpOnOpen, 0);
    c.engine.close();
    a.engine.close();
  });

  for (const [what, ahead] of [
    ['is ahead of the store', true],
    ['differs from the store at its head', false],
  ] as const)
    it(`throws a copy away and copies the tenant again when it ${what} (the tenant migrated again)`, async () => {
      const s = scratch();
      const dir = dataDir();
      const a = open(s, dir);
      const ownerId = createOwner(a, 'owner', OWNER).userId;
      agents(a, ownerId, ['alpha', 'beta']);
      const left = a.engine.head();
      a.engine.close();
      await s.drop();
      // The same schema and tenant now hold another log (a restore, a new migration).
      const b = open(s, sibling(dir));
      const otherOwner = createOwner(b, 'someone', OWNER).userId;
      // Shorter than the copy, or longer: then the store holds another row at the copy's head.
      for (let i = 0; !ahead && b.engine.head().position <= left.position; i++) agents(b, otherOwner, [`other-${i}`]);
      const head = b.engine.head();
      b.engine.close();
      assert.equal(head.position < left.position, ahead);
      const again = open(s, dir);
      cleanups.push(() => again.engine.close());
      assert.equal(again.engine.caughtUpOnOpen, head.position, 'copied from the first row');
      assert.deepEqual(again.engine.head(), head);
      assert.equal(getAgentByName(again.engine.db, ownerId, 'alpha'), null, 'nothing of the old log is left');
      assert.deepEqual(readAllRows(again.engine.db, { limit: 1000 }).length, head.position);
    });

  it('names rows removed from the store after its head instead of taking the short log as caught up', async () => {
    const s = scratch();
    const dir = dataDir();
    const a = open(s, dir);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    agents(a, ownerId, ['alpha']);
    const left = a.engine.head();
    a.engine.close();
    const b = open(s, sibling(dir));
    agents(b, ownerId, ['beta', 'gamma']);
    const head = b.engine.head();
    b.engine.close();
    // Everything after the copy's head deleted behind the store's back (its append-only triggers off).
    const raw = await pgRaw(s);
    try {
      await raw.query('ALTER TABLE es_events DISABLE TRIGGER USER');
      await raw.query('DELETE FROM es_events WHERE position > $1', [left.position]);
    } finally {
      await raw.end();
    }
    assert.throws(
      () => open(s, dir),
      (e: unknown) =>
        isDomainError(e) &&
        e.code === 'ErrChainBroken' &&
        e.message.includes(`position ${left.position + 1} is not there`) &&
        e.message.includes(`up to ${head.position}`),
    );
  });

  it('throws away a file that is no database and copies the tenant again', async () => {
    const s = scratch();
    const dir = dataDir();
    const a = open(s, dir);
    createOwner(a, 'owner', OWNER);
    const { name } = a.engine.db;
    a.engine.close();
    writeFileSync(name, 'this is not a SQLite database, only a file where one was'.repeat(100));
    const again = open(s, dir);
    cleanups.push(() => again.engine.close());
    assert.deepEqual(again.engine.head(), await storeHead(s));
    assert.equal(again.engine.caughtUpOnOpen, again.engine.head().position);
  });

  it('brings a projection of a newer version current from the copy’s own log, bringing nothing in', async () => {
    const s = scratch();
    const dir = dataDir();
    const a = open(s, dir);
    const ownerId = createOwner(a, 'owner', OWNER).userId;
    agents(a, ownerId, ['alpha', 'beta']);
    const before = sqliteTables(a.engine.db, productProjections);
    a.engine.close();
    const bumped = productProjections.map((p) => (p.name === 'principals' ? { ...p, version: p.version + 1 } : p));
    // The store's read models stay at this code's version: only the copy's projection is rebuilt.
    const engine = openTenantCopy(
      dir,
      { url: s.url, tenant: TENANT },
      new URL('../../../src/primary-worker.boot.mjs', import.meta.url),
      { projections: bumped },
    );
    try {
      assert.deepEqual(engine.startupRebuild?.projections, ['principals']);
      assert.equal(engine.startupRebuild?.events, engine.head().position, 'from the copy’s own log');
      assert.equal(engine.caughtUpOnOpen, 0);
      assert.deepEqual(sqliteTables(engine.db, productProjections), before);
    } finally {
      engine.close();
    }
    assert.ok(existsSync(join(dir, COPIES_DIR)));
  });
});
