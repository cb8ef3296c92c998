import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { productProjections } from '../../src/app.js';
import { COPIES_DIR, copyName } from '../../src/engine/pg/copy-file.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { verifyChain } from '../../src/engine/verify.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { colony, colonyLive, colonyOk, type LiveCli } from '../helpers/cli.js';
import { pgScratch, pgSkip } from '../helpers/pg.js';

/**
 * `colony serve` on a PostgreSQL store keeps its copy of the tenant in a file (engine/pg/copy-file.ts):
 * killed -9 in the middle of its first copy, or of a catch-up, the next start resumes from what the copy
 * holds and ends equal to the store — head position and hash, the copy's chain, `colony verify`.
 */
const TENANT = 'acme';
const lives: LiveCli[] = [];
after(() => lives.forEach((l) => l.proc.kill('SIGKILL')));

function start(url: string, dir: string): LiveCli {
  const live = colonyLive(['--store', url, 'serve', '--data', dir, '--port', '0', '--sandbox', 'off']);
  lives.push(live);
  return live;
}

/** `count` events in commands of 2,000 rows, straight on the store (as other nodes commit them). */
async function fill(store: PgEventStore, count: number, from: number): Promise<void> {
  for (let done = 0; done < count; done += 2000)
    await store.append({
      tenant: TENANT,
      streamId: `card-${from + done}`,
      expected: 'no_stream',
      events: Array.from({ length: Math.min(2000, count - done) }, (_, i) => ({
        type: 'CardCommented',
        data: { cardId: from + done, text: `comment ${i}: the review found two naming issues and one retry question` },
      })),
      actor: 'system',
    });
}

/** The copy's head, read through a connection of the test's own (0 while there is none). */
function copyHead(file: string): { position: number; hash: string } {
  if (!existsSync(file)) return { position: 0, hash: '' };
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT position, hash FROM es_events ORDER BY position DESC LIMIT 1').get();
    return (row as { position: number; hash: string } | undefined) ?? { position: 0, hash: '' };
  } catch {
    return { position: 0, hash: '' }; // its schema is not made yet
  } finally {
    db.close();
  }
}

/** Kills the node -9 once its copy holds more than `from` events and fewer than `to`; the copy's head then. */
async function killMidway(live: LiveCli, file: string, from: number, to: number): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { position } = copyHead(file);
    assert.ok(position < to, `the copy reached ${to} before the kill`);
    if (position > from) break;
    assert.ok(Date.now() < deadline, 'the copy did not start');
    await new Promise((r) => setTimeout(r, 5));
  }
  live.proc.kill('SIGKILL');
  await new Promise((r) => live.proc.once('exit', r));
  return copyHead(file).position;
}

/** Starts the node again, waits until it listens, stops it; returns where it said its copy resumed. */
async function restart(url: string, dir: string): Promise<number> {
  const live = start(url, dir);
  const line = await live.waitFor(/resumed at position/, 'stderr');
  await live.waitFor(/listening on http/, 'stderr');
  assert.equal(await live.stop(), 0);
  return (JSON.parse(line) as { resumedAt: number }).resumedAt;
}

async function assertEqual(file: string, store: PgEventStore): Promise<void> {
  const head = await store.head(TENANT);
  assert.deepEqual(copyHead(file), head, 'the copy ends at the store’s head');
  const db = new Database(file, { readonly: true });
  try {
    const walked = verifyChain(db);
    assert.ok(walked.ok && walked.events === head.position, JSON.stringify(walked));
  } finally {
    db.close();
  }
}

describe('colony serve’s copy of a PostgreSQL tenant across kill -9', { skip: pgSkip }, () => {
  it('resumes a first copy and a catch-up that kill -9 cut, and ends equal to the store', async () => {
    const scratch = pgScratch();
    const dir = tempDir();
    const url = `${scratch.url}&tenant=${TENANT}`;
    const store = await PgEventStore.open(scratch.url, { projections: productProjections });
    try {
      colonyOk(['--store', url, 'init', '--data', dir.dir, '--json']);
      const file = join(dir.dir, COPIES_DIR, `${copyName(url, TENANT)}.db`);
      await fill(store, 20_000, 1);
      rmSync(join(dir.dir, COPIES_DIR), { recursive: true }); // init's copy: the first start copies all of it
      const first = (await store.head(TENANT)).position;
      const cut = await killMidway(start(url, dir.dir), file, 0, first);
      assert.ok(cut > 0, 'the pages brought in before the kill are kept');
      assert.equal(await restart(url, dir.dir), cut, 'the first copy resumed where the kill left it');
      await assertEqual(file, store);

      await fill(store, 20_000, 100_000);
      const second = (await store.head(TENANT)).position;
      const caught = await killMidway(start(url, dir.dir), file, first, second);
      assert.equal(await restart(url, dir.dir), caught, 'the catch-up resumed where the kill left it');
      await assertEqual(file, store);
      const verify = colony(['--store', url, 'verify', '--data', dir.dir]);
      assert.equal(verify.code, 0, verify.stderr);
    } finally {
      await store.close();
      await scratch.drop();
      dir.cleanup();
    }
  });
});
