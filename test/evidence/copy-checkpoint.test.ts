import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { createOwner } from '../../src/actions/principals.js';
import { openApp, type App } from '../../src/app.js';
import { COPIES_DIR } from '../../src/engine/pg/copy-file.js';
import { startAutoCheckpoints } from '../../src/evidence/auto-checkpoint.js';
import { latestCheckpoint } from '../../src/evidence/checkpoint.js';
import { keepPrepared } from '../../src/evidence/copy-checkpoint.js';
import { currentSigner } from '../../src/evidence/keys.js';
import { prepareCheckpointOn, signCheckpoint } from '../../src/evidence/sign.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { pgRaw, pgScratch, pgSkip, type PgScratch } from '../helpers/pg.js';
import { plainAgent } from '../../testkit/agents.js';

/**
 * Automatic checkpoints of a node's copy of a PostgreSQL tenant (a file, engine/pg/copy-file.ts): the
 * checkpoint worker prepares them on the copy's file, off the event loop, and the node keeps them in the
 * copy and in the store — or drops one that another node's checkpoint already covers.
 */
const TENANT = 'acme';
const OWNER = { actor: 'user:owner' };
const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function node(s: PgScratch, keysFrom?: string): { app: App; dir: string } {
  const d = tempDir();
  if (keysFrom) cpSync(keysFrom, d.dir, { recursive: true, filter: (src) => !src.includes(`/${COPIES_DIR}`) });
  const app = openApp({ dataDir: d.dir, durability: 'normal', store: { url: s.url, tenant: TENANT } });
  cleanups.push(() => (app.engine.close(), d.cleanup()));
  return { app, dir: d.dir };
}

const agent = (app: App, ownerId: number, name: string) => plainAgent(app, ownerId, name, OWNER);

async function storeCheckpoints(s: PgScratch): Promise<Array<{ n: number; tree_size: number }>> {
  const raw = await pgRaw(s);
  try {
    const r = await raw.query<{ n: number; tree_size: number }>(
      'SELECT n::int AS n, tree_size::int AS tree_size FROM es_checkpoints WHERE tenant = $1 ORDER BY n',
      [TENANT],
    );
    return r.rows;
  } finally {
    await raw.end();
  }
}

describe('automatic checkpoints of a node’s copy of a PostgreSQL tenant', { skip: pgSkip }, () => {
  it('are prepared by the worker on the copy’s file and kept in the copy and the store', async () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    const { app, dir } = node(s);
    const ownerId = createOwner(app, 'owner', OWNER).userId;
    agent(app, ownerId, 'alpha');
    const auto = startAutoCheckpoints(app.engine, dir, { everyEvents: 1, everyMinutes: 0, intervalMs: 600_000 });
    try {
      await auto.look();
      const head = app.engine.head().position;
      assert.equal(latestCheckpoint(app.engine.db)?.checkpoint.body.treeSize, head);
      assert.deepEqual(await storeCheckpoints(s), [{ n: 1, tree_size: head }]);
      agent(app, ownerId, 'beta');
      await auto.look();
      assert.deepEqual(
        (await storeCheckpoints(s)).map((c) => c.tree_size),
        [head, app.engine.head().position],
      );
    } finally {
      await auto.stop();
    }
  });

  it('drops a prepared checkpoint another node’s covers, and keeps one that goes further', async () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    const a = node(s);
    const ownerId = createOwner(a.app, 'owner', OWNER).userId;
    const b = node(s, a.dir);
    const key = currentSigner(a.app.engine, a.dir, 'test');
    a.app.engine.catchUp();
    const prepared = prepareCheckpointOn(a.app.engine.db, key, new Date().toISOString())!;
    b.app.engine.catchUp();
    signCheckpoint(b.app.engine, b.dir, 'manual', 'test'); // another node signs the same tree first
    assert.equal(keepPrepared(a.app.engine, prepared), null);
    assert.equal(latestCheckpoint(a.app.engine.db)?.reason, 'manual', 'the other node’s, brought in');
    agent(a.app, ownerId, 'alpha');
    const further = prepareCheckpointOn(a.app.engine.db, key, new Date().toISOString())!;
    assert.equal(keepPrepared(a.app.engine, further)?.n, 2);
    assert.deepEqual(
      (await storeCheckpoints(s)).map((c) => c.tree_size),
      [prepared.checkpoint.body.treeSize, a.app.engine.head().position],
    );
  });
});
