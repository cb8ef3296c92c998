import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { openDatabase, userVersion } from '../../src/engine/db.js';
import { Engine } from '../../src/engine/engine.js';
import { SHADOW_MARK } from '../../src/engine/projection.js';
import { positionsSql } from '../../src/engine/projection-positions.js';
import { dumpTables, PROJECTED_TABLES, TEST_PROJECTIONS } from '../helpers/engine.js';
import { prng, seedFrom } from '../helpers/prng.js';
import { spawnWriter, type Child } from '../helpers/processes.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Crash safety: a writer process (test/helpers/writer-process.ts, mode "crash") is killed with SIGKILL at
 * random moments — most while it writes, some during start-up — again and again on the same database.
 * After every kill: the projections were exactly current before anything repaired them, the chain
 * verifies, every command's events are all there or all absent, ids were not leaked, and the projections
 * equal a rebuild from the log. A second test kills the very first start-up (migration, first projection
 * build) of fresh databases. Replay a failure with CRASH_SEED=<seed printed in the diagnostics>: the kill
 * plan and the writers' choices follow from it, the exact instant of each kill does not.
 */
const KILLS = 24;
const STARTUP_KILLS = 8;
const SEED = seedFrom('CRASH_SEED');

type Kill = { after: 'spawn' | 'opening' | 'ready'; delayMs: number };

function killPlan(seed: number): Kill[] {
  const rng = prng(seed);
  return Array.from({ length: KILLS }, (_, i): Kill => {
    if (i === 0) return { after: 'spawn', delayMs: 0 };
    if (i === 1) return { after: 'opening', delayMs: 0 }; // run 0 usually left no file: this is a first start-up
    const r = rng.next();
    if (r < 0.12) return { after: 'opening', delayMs: rng.int(0, 15) };
    if (r < 0.2) return { after: 'spawn', delayMs: rng.int(0, 900) };
    return { after: 'ready', delayMs: rng.int(20, 400) };
  });
}

async function killAt(child: Child, kill: Kill): Promise<void> {
  if (kill.after !== 'spawn') await child.waitForLine(kill.after);
  await delay(kill.delayMs);
  child.proc.kill('SIGKILL');
  const exit = await child.exit;
  assert.equal(
    exit.signal,
    'SIGKILL',
    `the writer ended on its own (code ${exit.code}) before the kill:\n${child.stderr()}`,
  );
}

interface Row {
  position: number;
  stream_id: string;
  type: string;
  data: string;
  command_id: string;
}

interface Tally {
  kinds: Map<string, number>;
  finishFromDone: number;
}

/** Every command id's events: contiguous, complete, and exactly what its kind must append (see writer-process.ts). */
function checkCommands(db: Database): Tally {
  const tally: Tally = { kinds: new Map(), finishFromDone: 0 };
  const rows = db
    .prepare(
      `SELECT position, stream_id, type, data, json_extract(meta, '$.commandId') AS command_id FROM es_events ORDER BY position`,
    )
    .all() as Row[];
  const column = new Map<string, string>();
  const seen = new Set<string>();
  const groups: { id: string; rows: Row[]; columnBefore: string | undefined }[] = [];
  for (const row of rows) {
    const current = groups[groups.length - 1];
    if (current?.id === row.command_id) current.rows.push(row);
    else {
      assert.ok(
        !seen.has(row.command_id),
        `the events of command ${row.command_id} are not contiguous (position ${row.position})`,
      );
      seen.add(row.command_id);
      groups.push({ id: row.command_id, rows: [row], columnBefore: column.get(row.stream_id) });
    }
    const data = JSON.parse(row.data) as { column?: string; to?: string };
    const next = row.type === 'CardOpened' ? data.column : row.type === 'CardMoved' ? data.to : undefined;
    if (next !== undefined) column.set(row.stream_id, next);
  }
  for (const { id, rows: events, columnBefore } of groups) {
    const [, kind, nText] = id.split(':');
    const n = Number(nText);
    const types = events.map((e) => e.type);
    const streams = new Set(events.map((e) => e.stream_id));
    const where = `command ${id} at positions ${events.map((e) => e.position).join(',')}`;
    switch (kind) {
      case 'open':
        assert.deepEqual(types, ['CardOpened'], where);
        break;
      case 'move':
        assert.deepEqual(types, ['CardMoved'], where);
        break;
      case 'comment':
        assert.deepEqual(types, ['CardCommented'], where);
        break;
      case 'finish': {
        const expected = columnBefore === 'done' ? ['CardClosed'] : ['CardMoved', 'CardClosed'];
        assert.deepEqual(types, expected, `${where} (the card was in ${columnBefore})`);
        assert.equal(streams.size, 1, where);
        assert.equal(n, expected.length, `${where}: the writer expected ${n} events`);
        if (expected.length === 1) tally.finishFromDone += 1;
        break;
      }
      case 'multi':
        assert.deepEqual(types, Array(n).fill('CardCommented'), where);
        assert.equal(streams.size, n, `${where}: ${n} comments on ${n} different cards`);
        for (const e of events) assert.equal((JSON.parse(e.data) as { text: string }).text, `${id}:${n}`, where);
        tally.kinds.set(`multi-${n}`, (tally.kinds.get(`multi-${n}`) ?? 0) + 1);
        break;
      default:
        assert.fail(`${where}: ${kind === 'doomed' ? 'a command that threw left events' : 'unexpected command id'}`);
    }
    tally.kinds.set(kind!, (tally.kinds.get(kind!) ?? 0) + 1);
  }
  return tally;
}

/** Card ids are allocated in the command's transaction: exactly 1..n for the n cards opened, none leaked. */
function checkIds(db: Database): void {
  const opened = db
    .prepare(`SELECT json_extract(data, '$.cardId') FROM es_events WHERE type = 'CardOpened' ORDER BY 1`)
    .pluck()
    .all() as number[];
  const high =
    (db.prepare(`SELECT value FROM es_sequences WHERE name = 'card'`).pluck().get() as number | undefined) ?? 0;
  assert.deepEqual(
    opened,
    Array.from({ length: opened.length }, (_, i) => i + 1),
    'card ids are 1..n',
  );
  assert.equal(high, opened.length, 'the card sequence matches the cards opened');
}

type RawState = 'no file' | 'no schema' | 'never opened' | 'open';

/**
 * Looks at the file before the engine touches it: the projections must be exactly at the head (they are
 * applied in the append transaction), unless the very first start-up never finished. Returns their rows.
 */

function inspectRaw(file: string): { state: RawState; tables: Record<string, unknown[]> | null; shadows: number } {
  if (!existsSync(file)) return { state: 'no file', tables: null, shadows: 0 };
  const db = openDatabase(file);
  try {
    if (userVersion(db) === 0) {
      const names = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all();
      assert.deepEqual(names, [], 'no schema version but tables exist: a migration committed halfway');
      return { state: 'no schema', tables: null, shadows: 0 };
    }
    const head = (db.prepare('SELECT MAX(position) FROM es_events').pluck().get() as number | null) ?? 0;
    const shadows = db
      .prepare(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND instr(name, ?) > 0`)
      .pluck()
      .get(SHADOW_MARK) as number;
    const names = JSON.stringify(TEST_PROJECTIONS.map((p) => p.name));
    const stored = db
      .prepare(
        `SELECT name, version, position FROM (${positionsSql(db)}) WHERE name IN (SELECT value FROM json_each(?)) ORDER BY name`,
      )
      .all(names) as { name: string; version: number; position: number }[];
    if (stored.length === 0) {
      assert.equal(head, 0, 'events were written before the projections were first built');
      return { state: 'never opened', tables: null, shadows };
    }
    const expected = TEST_PROJECTIONS.map((p) => ({ name: p.name, version: p.version, position: head }));
    assert.deepEqual(
      stored,
      expected.sort((a, b) => a.name.localeCompare(b.name)),
      'every projection is at the head',
    );
    return { state: 'open', tables: dumpTables(db, PROJECTED_TABLES), shadows };
  } finally {
    db.close();
  }
}

interface AfterKill {
  state: RawState;
  shadows: number;
  events: number;
  tally: Tally;
}

/** Everything checked after a kill, before the next writer starts: see the comment at the top. */
function checkAfterKill(file: string, context: string): AfterKill {
  const raw = inspectRaw(file);
  const engine = Engine.open({ file, durability: 'full', projections: TEST_PROJECTIONS });
  try {
    if (raw.tables) {
      assert.equal(engine.startupRebuild, null, `${context}: opening had to rebuild`);
      assert.deepEqual(
        dumpTables(engine.db, PROJECTED_TABLES),
        raw.tables,
        `${context}: opening changed the projections`,
      );
    }
    const verified = engine.verify();
    assert.ok(verified.ok, `${context}: ${JSON.stringify(verified)}`);
    const tally = checkCommands(engine.db);
    checkIds(engine.db);
    const incremental = dumpTables(engine.db, PROJECTED_TABLES);
    engine.rebuild();
    assert.deepEqual(
      dumpTables(engine.db, PROJECTED_TABLES),
      incremental,
      `${context}: projections differ from a rebuild`,
    );
    const shadows = engine.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND instr(name, ?) > 0`)
      .pluck()
      .all(SHADOW_MARK);
    assert.deepEqual(shadows, [], `${context}: a rebuild left shadow tables`);
    return { state: raw.state, shadows: raw.shadows, events: verified.events, tally };
  } finally {
    engine.close();
  }
}

describe('crash safety: a writer killed with SIGKILL at random moments', () => {
  it(
    `keeps the log, the commands and the projections consistent across ${KILLS} kills`,
    { timeout: 180_000 },
    async (t) => {
      const seed = SEED;
      const plan = killPlan(seed);
      t.diagnostic(`CRASH_SEED=${seed}`);
      const { dir, cleanup } = tempDir('colony-crash-');
      const file = join(dir, 'colony.db');
      const results: AfterKill[] = [];
      let midRebuild = 0;
      try {
        for (const [run, kill] of plan.entries()) {
          const context = `run ${run} (kill ${kill.delayMs} ms after ${kill.after}), CRASH_SEED=${seed}`;
          const child = spawnWriter(['crash', file, String((seed + run * 7919) >>> 0), `r${run}`]);
          await killAt(child, kill).catch((e: Error) => assert.fail(`${context}: ${e.message}`));
          if (child.lines.at(-1) === 'rebuild-start') midRebuild += 1;
          const result = checkAfterKill(file, context);
          assert.ok(result.events >= (results.at(-1)?.events ?? 0), `${context}: committed events were lost`);
          results.push(result);
        }
      } finally {
        cleanup();
      }
      const heads = results.map((r) => r.events);
      const { tally } = results.at(-1)!;
      t.diagnostic(`events after each kill: ${heads.join(' ')}`);
      t.diagnostic(
        `command groups checked: ${JSON.stringify(Object.fromEntries(tally.kinds))}; finish from done: ${tally.finishFromDone}`,
      );
      t.diagnostic(
        `killed during a rebuild: ${midRebuild}; shadow tables found after a kill: ${results.reduce((n, r) => n + r.shadows, 0)}`,
      );
      // The test only means something if the writer got far: every kind of command, many times over.
      for (const kind of ['open', 'move', 'comment', 'finish', 'multi', 'multi-4']) {
        assert.ok((tally.kinds.get(kind) ?? 0) > 0, `no ${kind} command was ever committed (CRASH_SEED=${seed})`);
      }
      assert.ok(tally.finishFromDone > 0, 'no FinishCard on a card already in done');
      assert.ok(new Set(heads).size >= KILLS / 2, `the log grew in too few runs: ${heads.join(' ')}`);
    },
  );

  it(
    `recovers from kills during the first start-up of ${STARTUP_KILLS} fresh databases`,
    { timeout: 90_000 },
    async (t) => {
      const seed = SEED;
      const rng = prng(seed);
      t.diagnostic(`CRASH_SEED=${seed}`);
      const states: string[] = [];
      for (let run = 0; run < STARTUP_KILLS; run++) {
        const { dir, cleanup } = tempDir('colony-startup-');
        try {
          const file = join(dir, 'colony.db');
          // Opening a fresh file (migration, then the first projection build) takes a few milliseconds.
          const kill: Kill = { after: 'opening', delayMs: rng.int(0, 10) };
          const context = `fresh run ${run} (kill ${kill.delayMs} ms after opening), CRASH_SEED=${seed}`;
          await killAt(spawnWriter(['crash', file, String(seed + run), `s${run}`]), kill).catch((e: Error) =>
            assert.fail(`${context}: ${e.message}`),
          );
          const result = checkAfterKill(file, context);
          states.push(`${result.state} (${result.events} events)`);
        } finally {
          cleanup();
        }
      }
      // Where the kills landed depends on the machine's timing, so it is reported, not asserted.
      t.diagnostic(`the file after each kill: ${states.join(', ')}`);
    },
  );
});
