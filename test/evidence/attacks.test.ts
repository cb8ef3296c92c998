import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import nacl from 'tweetnacl';
import { sendToChannel } from '../../src/actions/channels.js';
import { openApp, type App } from '../../src/app.js';
import { canonicalize } from '../../src/canonical.js';
import { fixedClock } from '../../src/clock.js';
import { readHead } from '../../src/engine/store.js';
import { checkpointParts, latestCheckpoint, signBody } from '../../src/evidence/checkpoint.js';
import { HeadsTree, streamHeads } from '../../src/evidence/heads.js';
import { signCheckpoint } from '../../src/evidence/sign.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { keyFromSeed, verifySignature } from '../../src/signing-key.js';
import { colony } from '../helpers/cli.js';
import {
  bundleText,
  colonyVerdict,
  GOLDEN_SEED,
  goldenBundleText,
  parseBundle,
  toolVerdictInProcess,
} from '../helpers/evidence.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Attacks found in review, each closed: a signature made malleable (S + L), an older signed
 * checkpoint row re-inserted to pose as the latest, a streams read table edited to make Colony sign that a
 * stream ends early, and `report --bundle` with a bundle of another key.
 */
const scratch = tempDir('colony-attacks-');
after(() => scratch.cleanup());

// The order of Ed25519's group: adding it to S gives a signature tweetnacl alone would still accept.
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

function mauled(signature: string): string {
  const sig = Buffer.from(signature, 'base64');
  let s = 0n;
  for (let i = 31; i >= 0; i--) s = (s << 8n) + BigInt(sig[32 + i]!);
  s += L;
  for (let i = 0; i < 32; i++) {
    sig[32 + i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return sig.toString('base64');
}

describe('attacks on the evidence', () => {
  const dir = join(scratch.dir, 'data');
  let text = '';
  let app: App;
  before(() => {
    mkdirSync(dir, { recursive: true });
    text = goldenBundleText(dir);
    app = openApp({ dataDir: dir, durability: 'normal', clock: fixedClock('2026-02-05T08:00:00.000Z', 1000) });
  });
  after(() => app.engine.close());

  it('a malleable signature (S + L) is refused by both verifiers', () => {
    const key = keyFromSeed(GOLDEN_SEED);
    const bundle = parseBundle(text);
    const sig = mauled(bundle.checkpoint.signature);
    assert.ok(
      nacl.sign.detached.verify(
        Buffer.from(canonicalize(bundle.checkpoint.body)),
        Buffer.from(sig, 'base64'),
        key.publicKey,
      ),
      'tweetnacl alone accepts it',
    );
    assert.equal(verifySignature(key.publicKey, canonicalize(bundle.checkpoint.body), sig), false);
    bundle.checkpoint.signature = sig;
    const file = join(scratch.dir, 'mauled.bundle.json');
    writeFileSync(file, bundleText(bundle));
    assert.equal(colonyVerdict(Buffer.from(bundleText(bundle))).code, 'bad_signature');
    assert.equal(toolVerdictInProcess(file).code, 'bad_signature');
  });

  it('an older signed checkpoint inserted again does not become the latest', () => {
    const goal = getGoal(app.engine.db, 1)!;
    sendToChannel(
      app,
      { key: `user-${goal.ownerId}`, name: 'owner', tenant: goal.ownerId },
      { id: goal.channelId },
      { body: 'later', subject: null, priority: 5, metadata: null, replyTo: null },
      { actor: 'user:owner' },
    );
    const first = signCheckpoint(app.engine, dir, 'manual', 'test').checkpoint;
    const old = app.engine.db
      .prepare('SELECT tree_size, key_id, body, signature, public_key FROM es_checkpoints ORDER BY n LIMIT 1')
      .get() as Record<string, unknown>;
    app.engine.db
      .prepare(
        'INSERT INTO es_checkpoints (tree_size, key_id, body, signature, public_key, reason) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(old.tree_size, old.key_id, old.body, old.signature, old.public_key, 'manual');
    const latest = latestCheckpoint(app.engine.db)!;
    assert.ok(Number(old.tree_size) < first.checkpoint.body.treeSize, 'the copy is of a smaller tree');
    assert.equal(latest.checkpoint.body.treeSize, first.checkpoint.body.treeSize, 'the largest tree stays the latest');
  });

  it('a streams read table edited to end a stream early is not what Colony signs', () => {
    const db = app.engine.db;
    const size = readHead(db).position;
    const truth = new HeadsTree(streamHeads(db, size, { fromLog: true })).root().toString('hex');
    db.prepare(
      "UPDATE streams SET version = 1, last_hash = (SELECT hash FROM es_events WHERE stream_id = 'goal-1' AND version = 1) WHERE stream_id = 'goal-1'",
    ).run();
    const parts = db.transaction(() =>
      checkpointParts(db, keyFromSeed(GOLDEN_SEED).keyId, '2026-02-05T09:00:00.000Z', size),
    )();
    assert.equal(parts.body.heads.root, truth, 'the heads come from the log when the read table disagrees with it');
    assert.ok(signBody(keyFromSeed(GOLDEN_SEED), parts.body));
  });

  it('report --bundle refuses a bundle signed by a key this log never adopted', () => {
    const bundle = parseBundle(text);
    const other = nacl.sign.keyPair();
    const otherKey = {
      publicKey: other.publicKey,
      secretKey: other.secretKey,
      keyId: keyFromSeed(other.secretKey.subarray(0, 32)).keyId,
    };
    const resigned = signBody(otherKey, { ...bundle.checkpoint.body, keyId: otherKey.keyId });
    const forged = { ...bundle, checkpoint: resigned.checkpoint, publicKey: resigned.publicKey };
    const file = join(scratch.dir, 'forged.bundle.json');
    writeFileSync(file, bundleText(forged));
    const r = colony(['report', '--goal', '1', '--out', join(scratch.dir, 'r.html'), '--bundle', file, '--data', dir]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /is not a valid goal bundle of this log: untrusted_key/);
  });
});
