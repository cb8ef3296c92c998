/**
 * Runs in a fresh process so its RSS is the rebuild's alone: `node --import tsx bench/rebuild-child.ts FILE`.
 * Measures, on the same seeded log: a raw read-and-upsert loop (the baseline), the engine's rebuild of
 * the two card projections (events/s and peak RSS), a raw hash loop and the engine's chain verification.
 * Prints one JSON object on stdout.
 */
import { createHash } from 'node:crypto';
import { migrate, openDatabase } from '../src/engine/db.js';
import { engineMigrations } from '../src/engine/schema.js';
import { verifyChain } from '../src/engine/verify.js';
import { rebuildProjections } from '../src/engine/rebuild.js';
import { cardProjections } from '../testkit/card-projections.js';
import { seconds } from './util.js';

const file = process.argv[2];
if (!file) throw new Error('usage: rebuild-child.ts FILE');
const db = openDatabase(file, { durability: 'full' });
migrate(db, engineMigrations);
const events = (db.prepare('SELECT COUNT(*) AS n, SUM(LENGTH(data)) AS bytes FROM es_events').get() as { n: number }).n; // also warms the OS cache
const mb = () => process.memoryUsage().rss / 1024 / 1024;

// Engine and baseline alternate, twice each, and the faster run of each counts: neither profits from
// running second on a warmer cache. Peak RSS is taken over the engine's rebuilds.
const rssBefore = mb();
let rssPeak = rssBefore;
const track = () => {
  rssPeak = Math.max(rssPeak, mb());
};
const rebuildRuns: number[] = [];
const rawRebuildRuns: number[] = [];
for (let round = 0; round < 2; round++) {
  rawRebuildRuns.push(seconds(() => rawReadAndUpsert()));
  rebuildRuns.push(seconds(() => rebuildProjections(db, cardProjections, { onProgress: track })));
  track();
}
const verifyRuns: number[] = [];
const rawVerifyRuns: number[] = [];
for (let round = 0; round < 2; round++) {
  rawVerifyRuns.push(seconds(() => rawHashLoop()));
  verifyRuns.push(
    seconds(() => {
      const r = verifyChain(db);
      if (!r.ok) throw new Error(`verify failed: ${r.message}`);
    }),
  );
}
db.close();
const [rebuildSeconds, rawRebuildSeconds, verifySeconds, rawVerifySeconds] = [
  rebuildRuns,
  rawRebuildRuns,
  verifyRuns,
  rawVerifyRuns,
].map((r) => Math.min(...r));

process.stdout.write(
  `${JSON.stringify({ events, rebuildSeconds, rawRebuildSeconds, verifySeconds, rawVerifySeconds, rssBefore, rssPeak })}\n`,
);

/** The baseline: the same upserts as the two projections, hand-written, one transaction per 10k events. */
function rawReadAndUpsert(): void {
  db.exec(`DROP TABLE IF EXISTS raw_cards; DROP TABLE IF EXISTS raw_columns;
    CREATE TABLE raw_cards (card_id INTEGER PRIMARY KEY, title TEXT NOT NULL, column_name TEXT NOT NULL, priority TEXT NOT NULL,
      status TEXT NOT NULL, comments INTEGER NOT NULL, updated_at TEXT NOT NULL, last_position INTEGER NOT NULL);
    CREATE INDEX raw_cards_by_column ON raw_cards (column_name, status);
    CREATE TABLE raw_columns (column_name TEXT PRIMARY KEY, open_cards INTEGER NOT NULL, closed_cards INTEGER NOT NULL);`);
  const page = db.prepare(
    'SELECT position, type, data, recorded_at FROM es_events WHERE position > ? ORDER BY position LIMIT 10000',
  );
  const open = db.prepare(`INSERT OR IGNORE INTO raw_cards VALUES (?, ?, ?, ?, 'open', 0, ?, ?)`);
  const move = db.prepare('UPDATE raw_cards SET column_name = ?, updated_at = ?, last_position = ? WHERE card_id = ?');
  const comment = db.prepare(
    'UPDATE raw_cards SET comments = comments + 1, updated_at = ?, last_position = ? WHERE card_id = ?',
  );
  const close = db.prepare(
    `UPDATE raw_cards SET status = 'closed', column_name = ?, updated_at = ?, last_position = ? WHERE card_id = ?`,
  );
  const bump = db.prepare(`INSERT INTO raw_columns VALUES (?, ?, ?) ON CONFLICT(column_name) DO UPDATE SET
    open_cards = open_cards + excluded.open_cards, closed_cards = closed_cards + excluded.closed_cards`);
  const step = db.transaction((after: number) => {
    const rows = page.all(after) as { position: number; type: string; data: string; recorded_at: string }[];
    for (const r of rows) {
      const d = JSON.parse(r.data);
      if (r.type === 'CardOpened') {
        open.run(d.cardId, d.title, d.column, d.priority ?? 'normal', r.recorded_at, r.position);
        bump.run(d.column, 1, 0);
      } else if (r.type === 'CardMoved') {
        move.run(d.to, r.recorded_at, r.position, d.cardId);
        bump.run(d.from, -1, 0);
        bump.run(d.to, 1, 0);
      } else if (r.type === 'CardCommented') comment.run(r.recorded_at, r.position, d.cardId);
      else if (r.type === 'CardClosed') {
        close.run(d.column, r.recorded_at, r.position, d.cardId);
        bump.run(d.column, -1, 1);
      }
    }
    return rows.length === 10000 ? rows[rows.length - 1]!.position : null;
  });
  for (let after: number | null = 0; after !== null; after = step.immediate(after));
}

/** The baseline for verify: read every row in pages and sha256 its columns, chained, with no format. */
function rawHashLoop(): void {
  const page = db.prepare('SELECT * FROM es_events WHERE position > ? ORDER BY position LIMIT 10000');
  let prev = '';
  for (let after = 0; ;) {
    const rows = page.all(after) as Record<string, string | number>[];
    for (const r of rows) {
      prev = createHash('sha256')
        .update(prev)
        .update(
          `${r.position}${r.stream_id}${r.version}${r.type}${r.schema_version}${r.data}${r.meta}${r.recorded_at}${r.prev_hash}`,
        )
        .digest('hex');
    }
    if (rows.length < 10000) return;
    after = rows[rows.length - 1]!.position as number;
  }
}
