import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Engine } from '../../src/engine/engine.js';
import { streamVersion } from '../../src/engine/store.js';
import { listCards } from '../../testkit/card-projections.js';
import { cardStream } from '../../testkit/cards.js';
import { dumpTables, openCard, PROJECTED_TABLES, TEST_PROJECTIONS } from '../helpers/engine.js';
import { seedFrom } from '../helpers/prng.js';
import { spawnWriter, type Child } from '../helpers/processes.js';
import type { Summary } from '../helpers/writer-process.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Optimistic concurrency across processes: four writers (test/helpers/writer-process.ts, mode "contend")
 * start together and comment the same four cards, each append carrying the version its writer read
 * outside any transaction. Every append must land at exactly that version + 1 or fail with
 * ErrConcurrency; nothing else (SQLITE_BUSY included) may escape. Replay with CONTEND_SEED=<seed>.
 */
const WRITERS = 4;
const CARDS = 4;
const ITERATIONS = 250;

interface Comment {
  stream_id: string;
  version: number;
  actor: string;
  text: string;
}

async function finish(child: Child, context: string): Promise<Summary> {
  const exit = await child.exit;
  assert.deepEqual(exit, { code: 0, signal: null }, `${context} failed:\n${child.stderr()}`);
  const last = child.lines.at(-1) ?? '';
  assert.ok(last.startsWith('{'), `${context} printed no summary: ${child.lines.join('\n')}`);
  return JSON.parse(last) as Summary;
}

describe('optimistic concurrency: four processes append to the same streams', () => {
  it(
    'serializes every append at its expected version and refuses the stale ones with ErrConcurrency',
    { timeout: 120_000 },
    async (t) => {
      const seed = seedFrom('CONTEND_SEED');
      t.diagnostic(`CONTEND_SEED=${seed}`);
      const { dir, cleanup } = tempDir('colony-contend-');
      const file = join(dir, 'colony.db');
      let children: Child[] = [];
      try {
        const setup = Engine.open({ file, durability: 'full', projections: TEST_PROJECTIONS });
        const streams = Array.from({ length: CARDS }, (_, i) => cardStream(openCard(setup, `contended ${i}`)));
        setup.close();

        const names = Array.from({ length: WRITERS }, (_, i) => `contender-${i}`);
        children = names.map((name, i) =>
          spawnWriter([
            'contend',
            file,
            String((seed + i * 104729) >>> 0),
            name,
            String(ITERATIONS),
            streams.join(','),
          ]),
        );
        // The barrier: every writer has opened the engine before any of them starts.
        await Promise.all(children.map((c) => c.waitForLine('ready')));
        for (const child of children) child.send('go');
        const summaries = await Promise.all(children.map((c, i) => finish(c, `${names[i]} (CONTEND_SEED=${seed})`)));

        const engine = Engine.open({ file, durability: 'full', projections: TEST_PROJECTIONS });
        try {
          const successes = summaries.reduce((n, s) => n + s.successes, 0);
          const conflicts = summaries.reduce((n, s) => n + s.conflicts, 0);
          t.diagnostic(
            `successes ${successes}, ErrConcurrency ${conflicts}: ${summaries.map((s) => `${s.name} ${s.successes}/${s.conflicts}`).join(', ')}`,
          );
          for (const s of summaries) assert.equal(s.attempts, ITERATIONS, `${s.name} stopped early`);
          for (const s of summaries)
            assert.equal(s.successes + s.conflicts, s.attempts, `${s.name}: every attempt ended one way or the other`);
          assert.ok(conflicts > 0, 'the race never happened: no writer lost (widen the window in writer-process.ts)');

          const verified = engine.verify();
          assert.ok(verified.ok, JSON.stringify(verified));

          const comments = engine.db
            .prepare(
              `SELECT stream_id, version, json_extract(meta, '$.actor') AS actor, json_extract(data, '$.text') AS text
                    FROM es_events WHERE type = 'CardCommented' ORDER BY position`,
            )
            .all() as Comment[];
          assert.equal(
            comments.length,
            successes,
            'every success is one CardCommented event, and nothing else was appended',
          );
          for (const s of summaries) {
            assert.equal(
              comments.filter((c) => c.actor === s.name).length,
              s.successes,
              `${s.name}: its successes are in the log`,
            );
            for (const stream of streams) {
              const mine = comments.filter((c) => c.actor === s.name && c.stream_id === stream).length;
              assert.equal(mine, s.perStream[stream] ?? 0, `${s.name} on ${stream}`);
            }
          }
          // Each comment says which version its writer read: it must have landed right after it.
          for (const c of comments) {
            const [writer, , read] = c.text.split(':');
            assert.equal(writer, c.actor, `text ${c.text}`);
            assert.equal(c.version, Number(read) + 1, `${c.text} on ${c.stream_id} landed at version ${c.version}`);
          }

          for (const stream of streams) {
            const versions = engine.db
              .prepare('SELECT version FROM es_events WHERE stream_id = ? ORDER BY position')
              .pluck()
              .all(stream);
            const n = streamVersion(engine.db, stream);
            assert.deepEqual(
              versions,
              Array.from({ length: n }, (_, i) => i + 1),
              `${stream}: versions 1..${n} in log order`,
            );
            assert.equal(
              n,
              1 + comments.filter((c) => c.stream_id === stream).length,
              `${stream}: opened once, then the comments`,
            );
          }
          const cards = listCards(engine.db);
          for (const card of cards) {
            const n = comments.filter((c) => c.stream_id === cardStream(card.card_id)).length;
            assert.equal(card.comments, n, `card ${card.card_id}: the projection counted every comment`);
          }
          assert.equal(cards.length, CARDS);

          const incremental = dumpTables(engine.db, PROJECTED_TABLES);
          engine.rebuild();
          assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), incremental, 'projections differ from a rebuild');
        } finally {
          engine.close();
        }
      } finally {
        // After a failure, writers still waiting for "go" would keep this process alive.
        for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
        await Promise.all(children.map((c) => c.exit));
        cleanup();
      }
    },
  );
});
