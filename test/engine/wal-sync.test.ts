import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { StoredEvent } from '../../src/engine/event.js';
import { SyncFailedError } from '../../src/engine/wal-sync.js';
import { CommitFailedError } from '../../src/engine/group-batch.js';
import { createHttpApp } from '../../src/http/server.js';
import { Engine } from '../../src/engine/engine.js';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { openCard, TEST_PROJECTIONS, witnessedEngine } from '../helpers/engine.js';
import { holdThePool } from '../helpers/hold-pool.js';

/**
 * A grouped batch under durability FULL commits without its fsync and syncs the WAL on the thread pool
 * (src/engine/wal-sync.ts): its callers are answered and its events published only after that sync, in
 * commit order; the log's readers on this connection stop at the durable head; a write outside the batches
 * syncs them first; a sync that fails says so to its callers and stops all writing.
 */
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function setup(durability: 'full' | 'normal' = 'full') {
  const { engine, witness, close } = witnessedEngine({ projections: TEST_PROJECTIONS, durability });
  engine.group.deferSyncs = true; // as createHttpApp sets it
  cleanups.push(close);
  const published: string[] = [];
  const sub = engine.bus.events$.subscribe((e: StoredEvent) =>
    published.push((e.data as { text?: string }).text ?? e.type),
  );
  cleanups.push(() => sub.unsubscribe());
  const card = openCard(engine, 'shared');
  const comment = (text: string) =>
    engine.group.run(async () =>
      engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text }, { actor: 'tester' }),
    );
  const committed = () => witness.prepare('SELECT COUNT(*) FROM es_events').pluck().get() as number;
  return { engine, published, card, comment, committed };
}

/** Callers that arrive together: the next batch is deferred (under load), as a lone caller's is not. */
async function underLoad(s: ReturnType<typeof setup>): Promise<ReturnType<typeof setup>> {
  await Promise.all([s.comment('warm 1'), s.comment('warm 2')]);
  s.published.length = 0;
  return s;
}

/** The check phase after the batch's own: its COMMIT has run, its sync (on the pool) cannot have returned yet. */
const afterCommit = () => new Promise((resolve) => setImmediate(resolve));
const synchronous = (engine: Engine) => Number(engine.db.pragma('synchronous', { simple: true }));
const walSync = (engine: Engine) => engine.group.wal as unknown as { fd: number | null; enabled: boolean };

describe('the WAL synced off the event loop', () => {
  it('a batch is committed before its sync, but answered, published and read only after it', async () => {
    const { engine, published, comment, committed } = await underLoad(setup());
    const before = committed();
    let answered = false;
    const call = comment('one').then((r) => ((answered = true), r));
    await afterCommit();
    assert.equal(committed(), before + 1, 'committed: another connection sees it');
    assert.equal(synchronous(engine), 2, 'FULL again for every transaction outside the batch');
    assert.deepEqual([answered, published], [false, []], 'not answered nor published before the sync');
    const head = engine.head().position;
    assert.equal(engine.durableHead(), head - 1, "the log's readers stop before it");
    assert.ok(engine.group.wal.durable(), 'an answer that read it waits');
    const result = await call;
    assert.equal(result.events[0]!.position, head);
    assert.deepEqual(published, ['one']);
    assert.equal(engine.durableHead(), head);
    assert.equal(engine.group.wal.durable(), null, 'nothing waits any more');
  });

  it('an open batch is not in the durable head either', async () => {
    const { engine, comment } = await underLoad(setup());
    const head = engine.head().position;
    const call = comment('open');
    assert.equal(engine.head().position, head + 1, 'this connection sees the open batch');
    assert.equal(engine.durableHead(), head);
    assert.equal(synchronous(engine), 1, 'the batch commits with NORMAL: its sync is ours');
    await call;
    assert.equal(engine.durableHead(), head + 1);
  });

  it('a read answers once what it could see is on disk', async () => {
    const { engine, comment } = await underLoad(setup());
    const call = comment('seen');
    await afterCommit();
    let answered = false;
    const read = engine.group.read(() => engine.head().position).then((head) => ((answered = true), head));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    assert.equal(answered, false, 'it saw a batch that is not on disk yet');
    const [written, seen] = await Promise.all([call, read]);
    assert.equal(seen, written.events[0]!.position);
    assert.equal(await engine.group.read(() => 'alone'), 'alone', 'nothing waiting: at once');
  });

  it("a read that could see an open batch's rows answers once that batch is committed and on disk", async () => {
    const { engine, comment } = await underLoad(setup());
    const write = comment('open'); // its batch is open: its row is visible on this connection, uncommitted
    let answered = false;
    const read = engine.group
      .read(() => engine.db.prepare('SELECT COUNT(*) FROM es_events').pluck().get())
      .then(() => (answered = true));
    await afterCommit(); // committed; its sync (on the pool) cannot have returned yet
    assert.equal(answered, false, 'not answered before the batch it saw is on disk');
    await write;
    await read;
    assert.equal(answered, true);
  });

  it('a read that saw a syncing batch waits for its sync even when the open batch fails at once', async () => {
    const { engine, comment } = await underLoad(setup());
    const order: string[] = [];
    const pool = holdThePool(300_000); // the sync queued next waits for a free thread
    const a = comment('A').then(() => order.push('A on disk'));
    await afterCommit(); // A is committed; its sync waits on the pool
    const b = comment('B').catch((e: unknown) => order.push(e instanceof CommitFailedError ? 'B failed' : String(e)));
    const read = engine.group.read(() => engine.db.prepare('SELECT COUNT(*) FROM es_events').pluck().get());
    engine.db.exec('ROLLBACK'); // as SQLite does on an I/O error in one of B's statements: its COMMIT fails
    await Promise.all([a, b, read.then(() => order.push('read answered'))]);
    assert.deepEqual(
      order,
      ['B failed', 'A on disk', 'read answered'],
      "the read saw A's rows: it answers once A is on disk",
    );
    await pool;
  });

  it('a write outside the batches syncs them first and is published after them', async () => {
    const { engine, published, card, comment } = await underLoad(setup());
    const calls = [comment('a'), comment('b')];
    await afterCommit();
    assert.deepEqual(published, []);
    engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text: 'outside' }, { actor: 'tester' });
    assert.deepEqual(published, ['a', 'b', 'outside'], 'in log order, the batch released in line');
    await Promise.all(calls);
    assert.deepEqual(published, ['a', 'b', 'outside'], 'released once');
  });

  it('batches in a row are released in commit order', async () => {
    const { published, comment } = await underLoad(setup());
    const calls: Promise<unknown>[] = [];
    for (const text of ['1', '2', '3', '4']) {
      calls.push(comment(text));
      await afterCommit(); // each its own batch, committed while the one before may still be syncing
    }
    await Promise.all(calls);
    assert.deepEqual(published, ['1', '2', '3', '4']);
  });

  it("a lone caller's batch syncs its own COMMIT: no hand-off to wait for", async () => {
    const { engine, published, comment } = setup();
    await comment('alone'); // the batch before held one command, and nothing is syncing
    published.length = 0;
    const call = comment('alone again');
    assert.equal(synchronous(engine), 2, 'FULL: the COMMIT syncs');
    await afterCommit();
    assert.deepEqual(published, ['alone again'], 'released at its COMMIT');
    assert.equal(engine.group.wal.durable(), null);
    await call;
  });

  it('an engine no server serves (in-process callers) syncs every COMMIT itself; createHttpApp turns the deferral on', async () => {
    const s = setup();
    s.engine.group.deferSyncs = false;
    const { engine, published, comment } = await underLoad(s);
    const call = comment('in process');
    await afterCommit();
    assert.deepEqual(published, ['in process'], 'released at its own synced COMMIT');
    await call;
    createHttpApp(engine);
    assert.equal(engine.group.deferSyncs, true);
  });

  it('a database file reached through a symlink: its WAL is found where SQLite keeps it, beside the real file', async () => {
    const root = mkdtempSync(join(tmpdir(), 'colony-wal-'));
    mkdirSync(join(root, 'real'));
    Engine.open({ file: join(root, 'real', 'colony.db'), projections: TEST_PROJECTIONS }).close();
    symlinkSync(join(root, 'real', 'colony.db'), join(root, 'link.db')); // the WAL is real/colony.db-wal
    const engine = Engine.open({ file: join(root, 'link.db'), projections: TEST_PROJECTIONS });
    cleanups.push(() => (engine.close(), rmSync(root, { recursive: true, force: true })));
    engine.group.deferSyncs = true;
    const card = openCard(engine, 'linked');
    const comment = (text: string) =>
      engine.group.run(async () =>
        engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text }, { actor: 'tester' }),
      );
    await Promise.all([comment('1'), comment('2')]);
    const call = comment('3');
    await afterCommit();
    assert.notEqual(engine.group.wal.durable(), null, 'deferred: the WAL beside the real file was opened');
    await call;
  });

  it('durability NORMAL has nothing to sync: a batch is released at its COMMIT', async () => {
    const { engine, published, comment } = await underLoad(setup('normal'));
    const call = comment('normal');
    await afterCommit();
    assert.deepEqual(published, ['normal']);
    assert.equal(engine.group.wal.durable(), null);
    assert.equal(synchronous(engine), 1);
    await call;
  });

  it('a sync that fails stops all writing: its batches answer ErrSyncFailed, unpublished, unread, and every later command is refused', async () => {
    const { engine, published, card, comment, committed } = await underLoad(setup());
    const wal = walSync(engine);
    const head = engine.head().position;
    const calls = [comment('lost? 1'), comment('lost? 2')];
    const real = wal.fd; // opened by the batch: deferred under load
    assert.notEqual(real, null);
    wal.fd = 2 ** 30; // no such descriptor: the sync fails with EBADF
    cleanups.push(() => void (wal.fd = real)); // closed as usual at the end
    for (const call of calls)
      await assert.rejects(
        call,
        (e: unknown) => e instanceof SyncFailedError && /disk did not confirm/.test(e.message),
      );
    assert.equal(committed(), head + 2, 'committed: the log holds them, unconfirmed');
    assert.deepEqual(published, [], 'no side effect follows from them');
    assert.equal(engine.durableHead(), head, 'the log readers stop before them');
    await assert.rejects(comment('later'), /ErrWritesStopped|takes no more writes/);
    assert.throws(
      () => engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text: 'outside' }, { actor: 'tester' }),
      (e: unknown) => (e as { code?: string }).code === 'ErrWritesStopped' && /restart it/.test((e as Error).message),
    );
    assert.equal(committed(), head + 2, 'nothing more was written');
  });

  it('a batch open when a sync fails is failed at its COMMIT, never released as done by a later sync', async () => {
    const { engine, published, comment, committed } = await underLoad(setup());
    const wal = walSync(engine);
    const head = engine.head().position;
    const lost = [comment('lost 1'), comment('lost 2')]; // one deferred batch, open: the WAL's descriptor is open
    const real = wal.fd;
    wal.fd = 2 ** 30; // its sync fails (EBADF)…
    await afterCommit(); // …committed, its sync started with the bad descriptor
    wal.fd = real; // the disk answers again: a later sync would succeed, and proves nothing
    const late = comment('late'); // a batch of its own, opened before the failure is known
    // The failed sync returns before the late batch's COMMIT (next turn's poll phase, then its check phase).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    for (const call of [...lost, late]) await assert.rejects(call, SyncFailedError);
    assert.equal(committed(), head + 3, 'all three are in the WAL, unconfirmed');
    assert.deepEqual(published, [], 'none of them is published');
    assert.equal(engine.durableHead(), head, 'the log readers stop before them');
  });

  it('a batch that syncs its own COMMIT while earlier ones wait is released after them, before what a subscriber then writes', async () => {
    const { engine, published, card, comment } = await underLoad(setup());
    const sub = engine.bus.events$.subscribe((e) => {
      if ((e.data as { text?: string }).text === 'deferred')
        engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text: 'reaction' }, { actor: 'tester' });
    });
    cleanups.push(() => sub.unsubscribe());
    const first = comment('deferred');
    await afterCommit();
    (walSync(engine) as { enabled: boolean }).enabled = false; // as when the WAL cannot be opened: in line
    const second = comment('in line');
    await Promise.all([first, second]);
    assert.deepEqual(published, ['deferred', 'in line', 'reaction'], 'log order');
    const positions = engine.head().position;
    assert.equal(engine.durableHead(), positions);
  });
});
