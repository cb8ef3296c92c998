import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Engine } from '../src/engine/engine.js';
import { pgTarget } from '../src/engine/pg/target.js';
import { PgEventStore } from '../src/engine/pg/store.js';
import { readAllRows } from '../src/engine/store.js';
import { cardProjections } from '../testkit/card-projections.js';
import { cardStream } from '../testkit/cards.js';
import { CardWorkload } from './workload.js';
import { figure, PAYLOAD_TEXT, prng, type Figure } from './util.js';

/**
 * Read models on PostgreSQL, each figure against its own same-run baseline:
 * - pg_rebuild_events_per_s: a tenant's read models rebuilt from its chain on PostgreSQL, against the same
 *   log's rebuild on SQLite (both with the card projections, one definition);
 * - pg_append_with_read_models: one caller's appends that each update a read model row, against the same
 *   appends with no read models — what keeping read models in the append's transaction costs there.
 */
export async function benchPgReadModels(
  url: string,
  options: { cards: number; appends: number },
  say: (s: string) => void,
): Promise<Record<string, Figure>> {
  const schema = `bench_rm_${process.pid}`;
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  const results: Record<string, Figure> = {};
  const engine = Engine.open({ file: ':memory:', durability: 'normal', projections: cardProjections });
  let store: PgEventStore | null = null;
  try {
    new CardWorkload(engine, prng(7)).seed(options.cards, 9);
    const rows = readAllRows(engine.db, { after: 0, limit: 10_000_000 });
    let started = performance.now();
    engine.rebuild();
    const sqliteRate = rows.length / ((performance.now() - started) / 1000);
    store = await PgEventStore.open(u.href, { projections: cardProjections, poolSize: 4 });
    for (let i = 0; i < rows.length; i += 5000) await store.importRows('bench', rows.slice(i, i + 5000));
    started = performance.now();
    await store.rebuild([], 'bench');
    const pgRate = rows.length / ((performance.now() - started) / 1000);
    results.pg_rebuild_events_per_s = {
      ...figure(Math.round(pgRate), 'events/s', Math.round(sqliteRate)),
      data: `${rows.length} events, card projections, vs SQLite's rebuild of the same log`,
    };
    say(`  rebuild: ${results.pg_rebuild_events_per_s.value} events/s (SQLite ${Math.round(sqliteRate)})`);
    const bare = await PgEventStore.open(u.href, { poolSize: 4 });
    try {
      const rate = async (s: PgEventStore, tenant: string) => {
        const t0 = performance.now();
        for (let i = 0; i < options.appends; i++)
          await s.append({
            tenant,
            streamId: cardStream(1),
            expected: 'any',
            events: [{ type: 'CardCommented', data: { cardId: 1, text: PAYLOAD_TEXT } }],
            actor: 'bench',
          });
        return options.appends / ((performance.now() - t0) / 1000);
      };
      // Alternated, twice each, on fresh tenants (the card exists in 'bench' only: comments on it update its row).
      const withRm: number[] = [];
      const without: number[] = [];
      for (let r = 0; r < 2; r++) {
        withRm.push(await rate(store, 'bench'));
        without.push(await rate(bare, `bare${r}`));
      }
      results.pg_append_with_read_models = {
        ...figure(Math.round(Math.max(...withRm)), 'commands/s', Math.round(Math.max(...without))),
        data: `1 caller, ${options.appends} appends, each updating one read-model row, vs the same appends with none`,
      };
      say(
        `  appends with read models: ${results.pg_append_with_read_models.value}/s (none: ${results.pg_append_with_read_models.baseline}/s)`,
      );
    } finally {
      await bare.close();
    }
  } finally {
    engine.close();
    await store?.close();
    const admin = new pg.Client({ connectionString: pgTarget(url).connectionString });
    await admin.connect();
    const schemas = await admin.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE $1`,
      [`${schema}%`],
    );
    for (const { name } of schemas.rows) await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await admin.end();
  }
  return results;
}
