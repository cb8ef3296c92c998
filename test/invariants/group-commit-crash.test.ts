import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Engine } from '../../src/engine/engine.js';
import { dumpTables, PROJECTED_TABLES, TEST_PROJECTIONS } from '../helpers/engine.js';
import { prng, seedFrom } from '../helpers/prng.js';
import { spawnWriter } from '../helpers/processes.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Group commit under kill -9: a writer (test/helpers/writer-process.ts, mode "grouped") runs rounds of ten
 * grouped callers, each round one batch with one COMMIT, and is killed at random moments. After every kill:
 * every command it acknowledged is in the log with all its events, every batch is there whole or not at
 * all, commands that threw left nothing, the chain verifies and the projections equal a rebuild.
 * Replay a failure with GROUP_CRASH_SEED=<seed printed in the diagnostics>.
 */
const KILLS = 6;
const SEED = seedFrom('GROUP_CRASH_SEED');

describe('group commit survives kill -9', () => {
  it(
    `loses no acknowledged command and leaves no partial batch across ${KILLS} kills`,
    { timeout: 120_000 },
    async (t) => {
      t.diagnostic(`GROUP_CRASH_SEED=${SEED}`);
      const { dir, cleanup } = tempDir();
      t.after(cleanup);
      const file = join(dir, 'colony.db');
      const rng = prng(SEED);
      const acked = new Set<string>();
      const rounds = new Map<string, number>();
      for (let k = 0; k < KILLS; k++) {
        const child = spawnWriter(['grouped', file, String(SEED + k), `r${k}`]);
        await child.waitForLine('ready');
        await delay(rng.int(5, 250));
        child.proc.kill('SIGKILL');
        const exit = await child.exit;
        assert.equal(exit.signal, 'SIGKILL', `the writer ended on its own (code ${exit.code}):\n${child.stderr()}`);
        for (const line of child.lines) {
          const [word, id, count] = line.split(' ');
          if (word === 'ack') acked.add(id!);
          if (word === 'round') rounds.set(id!, Number(count));
        }
        const engine = Engine.open({ file, projections: TEST_PROJECTIONS, durability: 'full' });
        try {
          assert.equal(engine.verify().ok, true, `kill ${k}: the chain verifies`);
          const rows = engine.db
            .prepare(
              `SELECT type, data, json_extract(meta, '$.commandId') AS id FROM es_events WHERE type = 'CardCommented' AND json_extract(meta, '$.commandId') LIKE 'r%'`,
            )
            .all() as { type: string; data: string; id: string }[];
          const events = new Map<string, string[]>();
          for (const r of rows)
            events.set(r.id, [...(events.get(r.id) ?? []), (JSON.parse(r.data) as { text: string }).text]);
          const perRound = new Map<string, number>();
          for (const [id, texts] of events) {
            const [, kind, n] = id.split(':');
            assert.equal(kind, 'grouped', `kill ${k}: ${id} threw but left events`);
            assert.deepEqual(texts, Array(Number(n)).fill(`${id}:${n}`), `kill ${k}: ${id} has all its events`);
            const round = id.slice(0, id.lastIndexOf('-'));
            perRound.set(round, (perRound.get(round) ?? 0) + 1);
          }
          for (const id of acked) assert.ok(events.has(id), `kill ${k}: acknowledged command ${id} is in the log`);
          for (const [round, present] of perRound)
            assert.equal(present, rounds.get(round), `kill ${k}: batch ${round} is whole`);
          const incremental = dumpTables(engine.db, PROJECTED_TABLES);
          engine.rebuild();
          assert.deepEqual(
            dumpTables(engine.db, PROJECTED_TABLES),
            incremental,
            `kill ${k}: the projections equal a rebuild`,
          );
        } finally {
          engine.close();
        }
      }
      assert.ok(acked.size >= KILLS * 10, `the writers were acknowledged for ${acked.size} commands`);
    },
  );
});
