import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkChainOnStart } from '../../src/evidence/chain-check.js';
import { migrate, openDatabase } from '../../src/engine/db.js';
import { Engine } from '../../src/engine/engine.js';
import { DomainError } from '../../src/errors.js';
import { CHAIN_BREAK_ACCEPTED } from '../../src/engine/anchor.js';
import { importRows } from '../../src/engine/command-log.js';
import { engineMigrations } from '../../src/engine/schema.js';
import { chainAnchorFile, readChainAnchor } from '../../src/engine/last-verify.js';
import { dumpTables, openCard, PROJECTED_TABLES, runCard, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';
import { chainRow, dropAppendOnlyTriggers, rawRow, rawRows, rehashFrom } from '../helpers/event-log.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The log end's anchor (`$log`: position and hash) and what hangs on it: every command and import
 * refuses a tail that is not the one the last command left (ErrChainBroken), the start-up check walks
 * only the rows after its verified anchor, and an accepted break is recorded, re-anchored and rebuilt.
 */
const scratch = tempDir('colony-anchor-');
after(() => scratch.cleanup());

/** Four cards, each opened and commented: positions 1–8, card n at 2n-1 and 2n. Triggers dropped. */
function buildLog(engine: Engine = testEngine()): Engine {
  for (let n = 1; n <= 4; n++)
    runCard(engine, openCard(engine, `Anchor card ${n}`), { type: 'CommentCard', text: `note ${n}` });
  assert.equal(engine.head().position, 8);
  dropAppendOnlyTriggers(engine.db);
  return engine;
}

const logRow = (engine: Engine) =>
  engine.db.prepare(`SELECT position, hash FROM es_projections WHERE name = '$log'`).get();
const everything = (engine: Engine) => ({
  rows: rawRows(engine.db),
  tables: dumpTables(engine.db, PROJECTED_TABLES),
  positions: engine.db.prepare('SELECT * FROM es_projections ORDER BY name').all(),
  sequences: engine.db.prepare('SELECT * FROM es_sequences ORDER BY name').all(),
});
const cardIds = (engine: Engine) => engine.db.prepare('SELECT card_id FROM cards ORDER BY 1').pluck().all();

function chainBroken(pattern: RegExp, details?: Record<string, unknown>) {
  return (e: unknown) => {
    assert.ok(e instanceof DomainError && e.code === 'ErrChainBroken', String(e));
    assert.match(e.message, pattern);
    if (details) assert.deepEqual(e.details, details);
    return true;
  };
}

describe('every command checks the tail against the $log anchor', () => {
  it('anchors the log end at the last row: position and hash, advanced by every command', () => {
    const engine = buildLog();
    assert.deepEqual(logRow(engine), engine.head());
    runCard(engine, 2, { type: 'MoveCard', to: 'doing' });
    assert.deepEqual(logRow(engine), engine.head());
  });

  it('refuses a command and an import on a log whose tail was cut, and writes nothing', () => {
    const engine = buildLog();
    engine.db.exec('DELETE FROM es_events WHERE position > 6');
    const before = everything(engine);
    const details = { headPosition: 6, anchorPosition: 8 };
    assert.throws(
      () => runCard(engine, 1, { type: 'CommentCard', text: 'after the cut' }),
      chainBroken(/ends at position 6 but the last command left it at position 8/, details),
    );
    assert.throws(() => openCard(engine, 'New card'), chainBroken(/position 6/, details));
    const next = chainRow({ ...rawRow(engine.db, 6), version: 3, data: '{"cardId":3,"text":"forged"}' }, engine.head());
    assert.throws(() => engine.importRows([next]), chainBroken(/position 6/, details));
    assert.deepEqual(everything(engine), before);
  });

  it('refuses a last row rewritten in place (same position, another hash)', () => {
    const engine = buildLog();
    engine.db.prepare(`UPDATE es_events SET data = replace(data, 'note 4', 'note X') WHERE position = 8`).run();
    rehashFrom(engine.db, 8);
    assert.throws(
      () => runCard(engine, 1, { type: 'MoveCard', to: 'doing' }),
      chainBroken(/last row \(position 8\) is not the one the last command wrote/),
    );
    assert.equal(engine.head().position, 8);
  });

  it('refuses rows slipped in behind the last command, and a deleted anchor row', () => {
    const engine = buildLog();
    engine.db.prepare(`UPDATE es_projections SET position = 7 WHERE name = '$log'`).run();
    assert.throws(
      () => runCard(engine, 1, { type: 'MoveCard', to: 'doing' }),
      chainBroken(/ends at position 8 but the last command left it at position 7/),
    );
    engine.db.prepare(`DELETE FROM es_projections WHERE name = '$log'`).run();
    assert.throws(() => runCard(engine, 1, { type: 'MoveCard', to: 'doing' }), chainBroken(/anchor row .* is missing/));
  });

  it('under group commit: a batch found sound once commits all its commands; on a cut tail every one is refused', async () => {
    const engine = buildLog();
    const grouped = (n: number) => engine.group.run(() => runCard(engine, n, { type: 'MoveCard', to: 'doing' }));
    const batches = engine.group.stats.batches;
    await Promise.all([1, 2, 3].map(grouped));
    assert.equal(engine.group.stats.batches, batches + 1, 'the three commands shared one batch');
    assert.deepEqual(logRow(engine), engine.head());
    assert.equal(engine.head().position, 11);

    engine.db.exec('DELETE FROM es_events WHERE position > 10');
    const before = everything(engine);
    const results = await Promise.allSettled([1, 2, 4].map(grouped));
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      chainBroken(/ends at position 10 but the last command left it at position 11/)(r.reason);
    }
    assert.deepEqual(everything(engine), before);
  });
});

describe('migration 2: the $log hash', () => {
  /** A database as release 1 left it: the engine's first migration, rows and $log at `logEnd`. */
  function releaseOne(name: string, logEnd: number): string {
    const rows = rawRows(buildLog().db);
    const file = join(scratch.dir, `${name}.db`);
    const db = openDatabase(file);
    migrate(
      db,
      engineMigrations.filter((m) => m.version === 1),
    );
    db.transaction(() => importRows(db, rows, '2026-01-01T00:00:00.000Z')).immediate();
    db.prepare(`UPDATE es_projections SET position = ? WHERE name = '$log'`).run(logEnd);
    db.close();
    return file;
  }

  it('takes the hash of the row at $log.position, and commands go on', () => {
    const engine = Engine.open({ file: releaseOne('v1', 8), projections: TEST_PROJECTIONS });
    try {
      assert.deepEqual(logRow(engine), engine.head());
      runCard(engine, 1, { type: 'MoveCard', to: 'doing' });
      assert.equal(engine.verify().ok, true);
    } finally {
      engine.close();
    }
  });

  it('leaves no hash when that row is gone (a tail cut before the upgrade), so nothing is appended', () => {
    const engine = Engine.open({ file: releaseOne('v1-cut', 10), projections: TEST_PROJECTIONS });
    try {
      assert.deepEqual(logRow(engine), { position: 10, hash: null });
      assert.throws(
        () => openCard(engine, 'New card'),
        chainBroken(/ends at position 8 but the last command left it at position 10/),
      );
    } finally {
      engine.close();
    }
  });
});

describe('verifyChain from an anchor (the start-up check)', () => {
  function anchored(): { engine: Engine; anchor: { position: number; hash: string } } {
    const engine = buildLog();
    const anchor = engine.head();
    for (let n = 1; n <= 4; n++) runCard(engine, n, { type: 'CommentCard', text: `later ${n}` }); // 9–12, streams begun before
    return { engine, anchor };
  }
  const failure = (engine: Engine, from: { position: number; hash: string }) => {
    const r = engine.verify({ from });
    return r.ok ? r : { position: r.position, reason: r.reason };
  };

  it('walks only the rows after it, continuing the streams begun before it', () => {
    const { engine, anchor } = anchored();
    assert.deepEqual(engine.verify({ from: anchor }), { ok: true, events: 4, head: engine.head() });
    assert.deepEqual(engine.verify({ from: engine.head() }), { ok: true, events: 0, head: engine.head() });
  });

  it('finds an edited row, a gap and a broken version sequence after the anchor', () => {
    const edited = anchored();
    edited.engine.db
      .prepare(`UPDATE es_events SET data = replace(data, 'later 2', 'later X') WHERE position = 10`)
      .run();
    assert.deepEqual(failure(edited.engine, edited.anchor), { position: 10, reason: 'hash_mismatch' });
    const gap = anchored();
    gap.engine.db.exec('DELETE FROM es_events WHERE position = 9');
    assert.deepEqual(failure(gap.engine, gap.anchor), { position: 9, reason: 'position_gap' });
    const jump = anchored();
    jump.engine.db.prepare('UPDATE es_events SET version = 4 WHERE position = 11').run(); // card-3 was at 2
    rehashFrom(jump.engine.db, 11);
    assert.deepEqual(failure(jump.engine, jump.anchor), { position: 11, reason: 'bad_version_sequence' });
  });

  it('fails when the anchor row was rewritten, deleted or cut off', () => {
    const rewritten = anchored();
    rewritten.engine.db
      .prepare(`UPDATE es_events SET data = replace(data, 'Anchor card 2', 'Anchor card X') WHERE position = 3`)
      .run();
    rehashFrom(rewritten.engine.db, 3);
    assert.deepEqual(failure(rewritten.engine, rewritten.anchor), { position: 8, reason: 'head_mismatch' });
    const deleted = anchored();
    deleted.engine.db.exec('DELETE FROM es_events WHERE position = 8');
    assert.deepEqual(failure(deleted.engine, deleted.anchor), { position: 8, reason: 'position_gap' });
    const cut = anchored();
    cut.engine.db.exec('DELETE FROM es_events WHERE position > 5');
    assert.deepEqual(failure(cut.engine, cut.anchor), { position: 6, reason: 'head_mismatch' });
  });

  it('holds the head to the $log hash, where the full walk holds it to the position only', () => {
    const { engine, anchor } = anchored();
    engine.db.prepare(`UPDATE es_events SET data = replace(data, 'later 4', 'later X') WHERE position = 12`).run();
    rehashFrom(engine.db, 12);
    assert.deepEqual(failure(engine, anchor), { position: 12, reason: 'head_mismatch' });
    assert.equal(engine.verify().ok, true, 'a re-hashed last row is caught against an anchor, not by the chain alone');
  });
});

describe('the start-up check and an accepted break', () => {
  const say = (lines: string[]) => (line: string) => void lines.push(line);

  it('refuses a cut tail, then records its acceptance, re-anchors, rebuilds and checks from the new anchor', () => {
    const dataDir = join(scratch.dir, 'accept');
    mkdirSync(dataDir);
    const engine = buildLog();
    const lines: string[] = [];
    const options = { dataDir, command: 'serve' as const, acceptBroken: false, say: say(lines) };
    const anchor = engine.head();
    assert.deepEqual(checkChainOnStart(engine, options), {
      from: { position: 0, hash: '0'.repeat(64) },
      checked: 8,
      head: anchor,
      acceptedAt: null,
    });
    assert.deepEqual((({ position, hash }) => ({ position, hash }))(readChainAnchor(dataDir) as typeof anchor), anchor);
    engine.db.exec('DELETE FROM es_events WHERE position > 6'); // card 4 is gone from the log, not from the read tables
    assert.throws(
      () => checkChainOnStart(engine, options),
      (e: unknown) =>
        e instanceof DomainError &&
        e.code === 'ErrChainBroken' &&
        /position 7: head_mismatch .*verified anchor at position 8/.test(e.message),
    );

    const report = checkChainOnStart(engine, { ...options, acceptBroken: true });
    assert.equal(report.acceptedAt, 7);
    assert.match(lines.join('\n'), /accepted the broken chain at position 7 \(head_mismatch/);
    const event = rawRow(engine.db, 7);
    assert.equal(event.type, CHAIN_BREAK_ACCEPTED);
    const data = JSON.parse(event.data) as Record<string, unknown>;
    assert.deepEqual(
      [data.position, data.reason, data.previousAnchor, data.command],
      [7, 'head_mismatch', anchor, 'serve'],
    );
    assert.deepEqual([data.tail, data.logEnd], [{ position: 6, hash: rawRow(engine.db, 6).hash }, anchor]);
    assert.deepEqual(logRow(engine), engine.head());
    assert.deepEqual(cardIds(engine), [1, 2, 3, 4], 'not rebuilt yet: every projection is marked stale');
    assert.ok(engine.ensureProjections(), 'the stale projections were rebuilt');
    assert.deepEqual(cardIds(engine), [1, 2, 3]);

    runCard(engine, 1, { type: 'MoveCard', to: 'doing' });
    const full = engine.verify();
    assert.deepEqual(
      !full.ok && [full.position, full.reason],
      [7, 'accepted_break'],
      'an audit keeps reporting the break',
    );
    assert.equal(checkChainOnStart(engine, options).from.position, 7, 'the next start checks from the new anchor');

    rmSync(chainAnchorFile(dataDir));
    assert.deepEqual(checkChainOnStart(engine, options).from.position, 7, 'without the file, from the last acceptance');
  });
});
