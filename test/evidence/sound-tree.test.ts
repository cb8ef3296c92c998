import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendToChannel } from '../../src/actions/channels.js';
import { canonicalize } from '../../src/canonical.js';
import { openApp, type App } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { leafHash, rootOfLeaves } from '../../src/engine/merkle.js';
import { exportGoalBundle } from '../../src/evidence/bundle-export.js';
import { checkBundle } from '../../src/evidence/bundle-verify.js';
import { signCheckpoint } from '../../src/evidence/sign.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { goldenBundleText, rewriteLog } from '../helpers/evidence.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Colony never signs what it has not checked (src/evidence/sign.ts): a damaged tree cache — a node on the
 * root's path or one only a proof uses — is rebuilt from the log before a checkpoint or a bundle is signed,
 * and a log that no longer extends the latest checkpoint is refused a new signature.
 */
const scratch = tempDir('colony-sound-tree-');
after(() => scratch.cleanup());

describe('signing with a damaged tree cache', () => {
  let app: App;
  const dir = scratch.dir;
  before(() => {
    goldenBundleText(dir); // a goal, its tasks and a checkpoint, signed by the golden key
    app = openApp({ dataDir: dir, durability: 'normal', clock: fixedClock('2026-02-02T08:00:00.000Z', 1000) });
    const goal = getGoal(app.engine.db, 1)!;
    const owner = { key: `user-${goal.ownerId}`, name: 'owner', tenant: goal.ownerId };
    for (let i = 0; i < 40; i++) {
      sendToChannel(
        app,
        owner,
        { id: goal.channelId },
        { body: `note ${i}`, subject: null, priority: 5, metadata: null, replyTo: null },
        { actor: 'user:owner' },
      );
    }
    signCheckpoint(app.engine, dir, 'manual', 'test');
  });
  after(() => app.engine.close());

  const db = () => app.engine.db;
  const trueRoot = (size: number) =>
    rootOfLeaves(
      (
        db().prepare('SELECT hash FROM es_events WHERE position <= ? ORDER BY position').pluck().all(size) as string[]
      ).map((h) => leafHash(Buffer.from(h, 'hex'))),
    );
  const damage = (level: number, idx: number) =>
    db().prepare('UPDATE es_merkle SET hash = ? WHERE level = ? AND idx = ?').run(Buffer.alloc(32, 0xab), level, idx)
      .changes;

  it('a node only a proof uses: the bundle is exported with proofs that verify', () => {
    assert.equal(damage(4, 0), 1, 'the first tile is cached');
    const { text, bundle } = exportGoalBundle(app.engine, dir, 1);
    assert.equal(
      text,
      `${canonicalize(bundle)}\n`,
      'the text written member by member is the canonical JSON of the bundle',
    );
    const checked = checkBundle(Buffer.from(text), null);
    assert.ok(checked.ok, JSON.stringify(!checked.ok && checked.failure));
    assert.ok(
      checked.bundle.events.some((e) => e.position <= 16),
      'the bundle has events in the damaged tile',
    );
    assert.notDeepEqual(
      db().prepare('SELECT hash FROM es_merkle WHERE level = 4 AND idx = 0').pluck().get(),
      Buffer.alloc(32, 0xab),
      'the cache was rebuilt',
    );
  });

  it("a node on the root's path: the next checkpoint still signs the true root", () => {
    const top = db().prepare('SELECT level, idx FROM es_merkle ORDER BY level DESC LIMIT 1').get() as {
      level: number;
      idx: number;
    };
    damage(top.level, top.idx);
    sendToChannel(
      app,
      { key: 'user-1', name: 'owner', tenant: 1 },
      { id: getGoal(db(), 1)!.channelId },
      { body: 'one more', subject: null, priority: 5, metadata: null, replyTo: null },
      { actor: 'user:owner' },
    );
    const { checkpoint, reused } = signCheckpoint(app.engine, dir, 'manual', 'test');
    assert.equal(reused, false);
    assert.equal(checkpoint.checkpoint.body.rootHash, trueRoot(checkpoint.checkpoint.body.treeSize).toString('hex'));
  });

  it('a log rewritten under the latest checkpoint is refused a new signature', () => {
    app.engine.close();
    rewriteLog(dir, 3, (data) => ({ ...data, title: 'Rewritten goal' }));
    app = openApp({ dataDir: dir, durability: 'normal', clock: fixedClock('2026-02-03T08:00:00.000Z', 1000) });
    const before = db().prepare('SELECT COUNT(*) FROM es_checkpoints').pluck().get();
    assert.throws(
      () => exportGoalBundle(app.engine, dir, 1),
      /refusing to sign: the log does not extend the latest checkpoint/,
    );
    assert.equal(db().prepare('SELECT COUNT(*) FROM es_checkpoints').pluck().get(), before, 'nothing was signed');
  });
});
