import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import nacl from 'tweetnacl';
import { createGoal } from '../../src/actions/goals.js';
import { openApp } from '../../src/app.js';
import { openDatabase } from '../../src/engine/db.js';
import { checkpointParts, type SignedCheckpoint } from '../../src/evidence/checkpoint.js';
import type { EventRow } from '../../src/engine/event.js';
import { rowHash } from '../../src/engine/hash.js';
import { leafHash, rootOfLeaves } from '../../src/engine/merkle.js';
import { colony, colonyLive, colonyOk } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Signed checkpoints through the real CLI. Every field of `colony checkpoint --json` is
 * recomputed here from the rows of es_events (root and heads root straight from RFC 9162's definition),
 * at sizes below, above and between multiples of 16; `serve` signs one by itself when the log has grown
 * by --checkpoint-events (appends by another process count); and on start it refuses a log re-hashed
 * behind its back that no longer has a signed root — while a damaged Merkle cache alone is rebuilt.
 * One data dir, grown as the tests go; the serve cases work on copies of it.
 */
const scratch = tempDir('colony-checkpoints-');
after(() => scratch.cleanup());

const by = { key: 'user-1', name: 'owner', tenant: 1 };
let goals = 0;
/** Appends `count` goals (a channel and a goal each: two events) in this process, as a second writer would. */
function addGoals(dir: string, count: number): void {
  const app = openApp({ dataDir: dir });
  try {
    for (let i = 0; i < count; i += 1) {
      goals += 1;
      createGoal(
        app,
        by,
        {
          title: `Goal ${goals}`,
          description: 'A goal whose events a checkpoint covers.',
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 3,
          coordinatorConfig: 'default',
          approvalMode: 'human',
        },
        { actor: 'user:owner' },
      );
    }
  } finally {
    app.engine.close();
  }
}

function withDb<T>(dir: string, fn: (db: Database) => T, readonly = false): T {
  const db = openDatabase(join(dir, 'colony.db'), { readonly });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const count = (dir: string): number =>
  withDb(dir, (db) => db.prepare('SELECT COUNT(*) FROM es_events').pluck().get() as number);

/** RFC 9162 MTH of the first `size` events, straight from the rows. */
function independentRoot(db: Database, size: number): string {
  const hashes = db
    .prepare('SELECT hash FROM es_events WHERE position <= ? ORDER BY position')
    .pluck()
    .all(size) as string[];
  assert.equal(hashes.length, size);
  return rootOfLeaves(hashes.map((h) => leafHash(Buffer.from(h, 'hex')))).toString('hex');
}

/** Every stream's last event at `size`, sorted by the UTF-8 bytes of its id, each leaf the canonical JSON {hash, streamId, version}. */
function independentHeads(db: Database, size: number): { count: number; root: string } {
  const rows = db
    .prepare('SELECT stream_id, version, hash FROM es_events WHERE position <= ? ORDER BY position')
    .all(size) as { stream_id: string; version: number; hash: string }[];
  const last = new Map<string, { version: number; hash: string }>();
  for (const r of rows) last.set(r.stream_id, { version: r.version, hash: r.hash });
  const ids = [...last.keys()].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  const leaves = ids.map((id) => {
    const h = last.get(id)!;
    const json = `{"hash":${JSON.stringify(h.hash)},"streamId":${JSON.stringify(id)},"version":${h.version}}`;
    return createHash('sha256')
      .update(Buffer.from([0]))
      .update(json, 'utf8')
      .digest();
  });
  return { count: ids.length, root: rootOfLeaves(leaves).toString('hex') };
}

const keyIdOf = (publicKey: Uint8Array): string =>
  `SHA256:${createHash('sha256').update(publicKey).digest('base64').replace(/=+$/, '')}`;
const canonicalBody = (b: SignedCheckpoint['checkpoint']['body']): string =>
  JSON.stringify(
    Object.fromEntries(
      Object.entries(b)
        .sort(([x], [y]) => (x < y ? -1 : 1))
        .map(([k, v]) => [
          k,
          v !== null && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)))
            : v,
        ]),
    ),
  );

/** Checks every field of a signed checkpoint of the first `size` events against the rows and the key file. */
function assertCheckpointOf(dir: string, signed: SignedCheckpoint, size: number): void {
  const { body, signature } = signed.checkpoint;
  const publicKey = new Uint8Array(Buffer.from(signed.publicKey, 'base64'));
  const seed = new Uint8Array(readFileSync(join(dir, 'signing.key')));
  assert.deepEqual(publicKey, nacl.sign.keyPair.fromSeed(seed).publicKey, "the data dir's key signed it");
  withDb(
    dir,
    (db) => {
      assert.deepEqual(Object.keys(body).sort(), [
        'format',
        'heads',
        'keyId',
        'logId',
        'rootHash',
        'time',
        'treeSize',
        'version',
      ]);
      assert.equal(body.format, 'colony-checkpoint');
      assert.equal(body.version, 1);
      assert.equal(body.treeSize, size);
      assert.equal(body.logId, db.prepare('SELECT hash FROM es_events WHERE position = 1').pluck().get());
      assert.equal(body.keyId, keyIdOf(publicKey));
      assert.equal(body.rootHash, independentRoot(db, size), `root at ${size} events`);
      assert.deepEqual(body.heads, independentHeads(db, size), `heads at ${size} events`);
      assert.equal(
        body.heads.count,
        db.prepare('SELECT COUNT(DISTINCT stream_id) FROM es_events WHERE position <= ?').pluck().get(size),
      );
      assert.ok(!Number.isNaN(Date.parse(body.time)));
    },
    true,
  );
  const message = new TextEncoder().encode(canonicalBody(body));
  assert.ok(
    nacl.sign.detached.verify(message, new Uint8Array(Buffer.from(signature, 'base64')), publicKey),
    'the signature verifies',
  );
}

const checkpointJson = (dir: string): SignedCheckpoint =>
  JSON.parse(colonyOk(['checkpoint', '--json', '--data', dir])) as SignedCheckpoint;
interface Listed {
  n: number;
  reason: string;
  checkpoint: SignedCheckpoint['checkpoint'];
  publicKey: string;
}
const list = (dir: string, ...extra: string[]): Listed[] =>
  JSON.parse(colonyOk(['checkpoints', 'list', '--json', ...extra, '--data', dir])) as Listed[];

/** Starts serve (checkpoints off unless given), waits until it answers, runs `during`, stops it cleanly. */
async function serving(dir: string, extra: readonly string[] = [], during?: () => Promise<void>): Promise<string[]> {
  const live = colonyLive([
    'serve',
    '--data',
    dir,
    '--port',
    '0',
    '--checkpoint-events',
    '0',
    '--checkpoint-minutes',
    '0',
    ...extra,
  ]);
  const stderr: string[] = [];
  live.proc.stderr!.on('data', (b: Buffer) => stderr.push(b.toString()));
  try {
    const listening = await live.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 'stderr');
    assert.equal((await fetch(`${listening.match(/http:\/\/127\.0\.0\.1:\d+/)![0]}/health`)).status, 200);
    await during?.();
  } finally {
    assert.equal(await live.stop(), 0);
  }
  return stderr.join('').split('\n');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('signed checkpoints', () => {
  const main = join(scratch.dir, 'main');
  before(() => {
    colonyOk(['init', '--data', main]);
  });

  it('colony checkpoint --json signs the log as it is: every field recomputed from the rows; a second one with no new events is the same', () => {
    const size = count(main);
    const signed = checkpointJson(main);
    assert.deepEqual(Object.keys(signed).sort(), ['checkpoint', 'publicKey']);
    assertCheckpointOf(main, signed, size);
    const again = colony(['checkpoint', '--data', main]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      new RegExp(`^unchanged since checkpoint #1: ${size} events, root ${signed.checkpoint.body.rootHash}, `),
    );
    assert.deepEqual(
      withDb(main, (db) => db.prepare('SELECT n, tree_size, reason FROM es_checkpoints').all(), true),
      [{ n: 1, tree_size: size, reason: 'manual' }],
    );
  });

  it("the root is RFC 9162's at sizes above, between and off multiples of 16, and the Merkle cache holds only true subtrees", () => {
    const sizes: number[] = [];
    for (const more of [8, 10, 54]) {
      addGoals(main, more);
      const size = count(main);
      assert.ok(size > 16 && size % 16 !== 0, `size ${size}`);
      sizes.push(size);
      assertCheckpointOf(main, checkpointJson(main), size);
    }
    assert.ok(sizes.at(-1)! > 128, `a tree with cached subtrees of several levels (${sizes.join(', ')})`);
    withDb(
      main,
      (db) => {
        const leaves = (db.prepare('SELECT hash FROM es_events ORDER BY position').pluck().all() as string[]).map((h) =>
          leafHash(Buffer.from(h, 'hex')),
        );
        const cache = db.prepare('SELECT level, idx, hash FROM es_merkle').all() as {
          level: number;
          idx: number;
          hash: Buffer;
        }[];
        assert.ok(cache.length > 0);
        for (const { level, idx, hash } of cache)
          assert.deepEqual(hash, rootOfLeaves(leaves, idx << level, 1 << level), `es_merkle (${level}, ${idx})`);
        // And the checkpoint statement at every size of the log, in process (the cache covers only part of most).
        db.transaction(() => {
          for (let size = 1; size <= leaves.length; size += 1) {
            const { body } = checkpointParts(db, 'SHA256:test', '2026-01-01T00:00:00.000Z', size);
            assert.equal(body.rootHash, rootOfLeaves(leaves, 0, size).toString('hex'), `root at ${size}`);
            assert.deepEqual(body.heads, independentHeads(db, size), `heads at ${size}`);
          }
        })();
      },
      true,
    );
  });

  it('checkpoints list --json is newest first; --limit caps it; --limit 0 is a clear error', () => {
    const all = list(main);
    assert.deepEqual(
      all.map((c) => c.n),
      [4, 3, 2, 1],
    );
    assert.ok(all.every((c) => c.reason === 'manual'));
    const sizes = all.map((c) => c.checkpoint.body.treeSize);
    assert.deepEqual(
      sizes,
      [...sizes].sort((a, b) => b - a),
    );
    assert.equal(all[0]!.checkpoint.body.treeSize, count(main));
    assert.deepEqual(
      list(main, '--limit', '2').map((c) => c.n),
      [4, 3],
    );
    const zero = colony(['checkpoints', 'list', '--limit', '0', '--data', main]);
    assert.equal(zero.code, 1);
    assert.equal(zero.stdout, '');
    assert.equal(zero.stderr, 'colony: --limit must be an integer from 1 to 10000, not "0"\n');
  });
});

/** The serve cases run side by side (most of their time is waiting on processes), each on its own data dir. */
describe('serve and signed checkpoints', { concurrency: true }, () => {
  const main = join(scratch.dir, 'main');
  const rehashed = join(scratch.dir, 'rehashed');
  const damaged = join(scratch.dir, 'damaged-cache');
  before(() => {
    cpSync(main, rehashed, { recursive: true });
    cpSync(main, damaged, { recursive: true });
  });

  it('serve refuses a checkpoint setting that is not a non-negative integer, from the flag or the environment', () => {
    const flag = colony(['serve', '--port', '0', '--checkpoint-events', 'abc', '--data', main]);
    assert.equal(flag.code, 1);
    assert.equal(
      flag.stderr,
      'colony: ErrInvalidInput: --checkpoint-events must be a non-negative integer (0 turns it off), not "abc"\n',
    );
    const env = colony(['serve', '--port', '0', '--data', main], { COLONY_CHECKPOINT_MINUTES: '1.5' });
    assert.equal(env.code, 1);
    assert.equal(
      env.stderr,
      'colony: ErrInvalidInput: --checkpoint-minutes must be a non-negative integer (0 turns it off), not "1.5"\n',
    );
  });

  it('serve --checkpoint-events 5 signs an auto checkpoint once another process has appended 5 events', async (t) => {
    type Row = { n: number; reason: string; tree_size: number };
    const latest = (): Row =>
      withDb(
        main,
        (db) => db.prepare('SELECT n, reason, tree_size FROM es_checkpoints ORDER BY n DESC LIMIT 1').get(),
        true,
      ) as Row;
    const base = latest();
    const seen = { auto: null as Row | null, listed: [] as Listed[], afterMs: 0 };
    const lines = await serving(main, ['--checkpoint-events', '5', '--checkpoint-minutes', '0'], async () => {
      assert.equal(count(main), base.tree_size, 'serve appended nothing on start');
      addGoals(main, 2); // 4 events: not yet
      // A look happens every 5 s: wait until one has surely seen the 4 events.
      await sleep(5_500);
      assert.equal(latest().n, base.n, 'no checkpoint after 4 events');
      addGoals(main, 1); // 6 events
      const wrote = Date.now();
      while (Date.now() < wrote + 15_000 && latest().n === base.n) await sleep(200);
      seen.afterMs = Date.now() - wrote;
      seen.auto = latest();
      seen.listed = list(main, '--limit', '1');
    });
    t.diagnostic(`auto checkpoint ${seen.afterMs} ms after the 5th event`);
    assert.notEqual(seen.auto?.n, base.n, 'no auto checkpoint within 15 s of the 5th event');
    assert.ok(
      lines.some((l) => l.startsWith('Signed checkpoints of the log: every 5 events (')),
      lines.join('\n'),
    );
    const [listed] = seen.listed;
    assert.equal(seen.listed.length, 1);
    assert.equal(listed!.n, seen.auto!.n);
    assert.equal(listed!.reason, 'auto');
    assert.equal(listed!.checkpoint.body.treeSize, base.tree_size + 6, 'signed at the head it saw, 6 events on');
    assertCheckpointOf(main, listed!, base.tree_size + 6);
  });

  it('serve refuses a log re-hashed behind its back that no longer has the signed root; accepted once, later starts pass', async () => {
    const dir = rehashed;
    const kept = withDb(dir, (db) =>
      db.prepare('SELECT n, body, signature, public_key FROM es_checkpoints ORDER BY n DESC LIMIT 1').get(),
    ) as { n: number; body: string; signature: string; public_key: string };
    const cpFile = join(scratch.dir, 'kept.json');
    writeFileSync(
      cpFile,
      JSON.stringify({
        checkpoint: { body: JSON.parse(kept.body), signature: kept.signature },
        publicKey: kept.public_key,
      }),
    );
    const { treeSize, rootHash } = (JSON.parse(readFileSync(cpFile, 'utf8')) as SignedCheckpoint).checkpoint.body;
    // Rewrite a goal's title inside the first cached tile, re-hash the chain from there to the end, fix
    // the log's own end record and drop the anchor file: the chain alone now holds from the genesis.
    let position = 0;
    withDb(dir, (db) => {
      db.exec('DROP TRIGGER es_events_no_update; DROP TRIGGER es_events_no_delete;');
      position = db
        .prepare(`SELECT position FROM es_events WHERE type = 'GoalCreated' ORDER BY position LIMIT 1`)
        .pluck()
        .get() as number;
      assert.ok(position < 16 && position < treeSize);
      const rows = db
        .prepare('SELECT * FROM es_events WHERE position >= ? ORDER BY position')
        .all(position) as EventRow[];
      let prev = db
        .prepare('SELECT hash FROM es_events WHERE position = ?')
        .pluck()
        .get(position - 1) as string;
      const put = db.prepare('UPDATE es_events SET data = ?, prev_hash = ?, hash = ? WHERE position = ?');
      db.transaction(() => {
        for (const r of rows) {
          const data = r.position === position ? r.data.replace('"title":"Goal 1"', '"title":"Goal X"') : r.data;
          if (r.position === position) assert.notEqual(data, r.data);
          const hash = rowHash({ ...r, data, prev_hash: prev });
          put.run(data, prev, hash, r.position);
          prev = hash;
        }
        db.prepare(`UPDATE es_projections SET hash = ? WHERE name = '$log'`).run(prev);
      })();
    });
    rmSync(join(dir, 'chain-anchor.json'), { force: true });
    // The chain alone holds from the genesis (reason "chain" otherwise); the signed root is what fails.
    const since = colony(['verify', '--since', cpFile, '--data', dir]);
    assert.equal(since.code, 1);
    assert.match(since.stderr, /^colony: verify --since failed: not_extended \(/);

    const refused = colony(['serve', '--port', '0', '--data', dir]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(
        `^colony: ErrChainBroken: the event log does not match its signed checkpoint at position ${treeSize}: checkpoint_mismatch ` +
          `\\(checkpoint #${kept.n} \\(${treeSize} events\\): the log's first ${treeSize} events no longer have the signed root ${rootHash}.*--accept-broken-chain`,
      ),
    );

    const accepted = await serving(dir, ['--accept-broken-chain']);
    assert.ok(
      accepted.some((l) => l.includes(`accepted the broken chain at position ${treeSize} (checkpoint_mismatch:`)),
      accepted.join('\n'),
    );
    assert.equal(
      withDb(dir, (db) => db.prepare(`SELECT type FROM es_events ORDER BY position DESC LIMIT 1`).pluck().get()),
      'ChainBreakAccepted',
    );
    await serving(dir); // the checkpoint predates the accepted break: no longer checked
  });

  it('a damaged Merkle cache alone does not stop serve: it is rebuilt from the log', async () => {
    const dir = damaged;
    // The subtree the latest checkpoint's root is built from first: the largest cached one.
    const row = withDb(dir, (db) => {
      const r = db
        .prepare('SELECT level, idx, hash FROM es_merkle WHERE idx = 0 ORDER BY level DESC LIMIT 1')
        .get() as { level: number; idx: number; hash: Buffer };
      db.prepare('UPDATE es_merkle SET hash = ? WHERE level = ? AND idx = ?').run(
        Buffer.alloc(32, 0xab),
        r.level,
        r.idx,
      );
      return r;
    });
    assert.ok(row.level >= 5);
    await serving(dir);
    withDb(
      dir,
      (db) => {
        const leaves = (db.prepare('SELECT hash FROM es_events ORDER BY position').pluck().all() as string[]).map((h) =>
          leafHash(Buffer.from(h, 'hex')),
        );
        const now = db
          .prepare('SELECT hash FROM es_merkle WHERE level = ? AND idx = ?')
          .pluck()
          .get(row.level, row.idx) as Buffer;
        assert.deepEqual(now, rootOfLeaves(leaves, 0, 1 << row.level));
        assert.deepEqual(now, row.hash);
      },
      true,
    );
  });
});
