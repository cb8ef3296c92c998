import type { Command } from 'commander';
import type { Database } from 'better-sqlite3';
import type { EventRow } from '../engine/event.js';
import type { PgEventStore } from '../engine/pg/store.js';
import type { readAllRows as ReadAllRows } from '../engine/store.js';
import { action, CliError, globals, openExistingStore, parseStore, printJson, progressBar } from './shared.js';

const BATCH = 5000;

/**
 * `colony migrate --to postgres://…`: moves the data dir's SQLite log to a tenant of a PostgreSQL store,
 * row for row with every hash, builds the tenant's read models from it, and checks both chains. Each batch commits on its own and must continue
 * the target's chain, so an interrupted migration is resumed by running it again; a target tenant that
 * holds a different log is refused.
 */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description("copy this data dir's event log, hash chain intact, to a PostgreSQL store")
    .requiredOption('--to <url>', 'the PostgreSQL store (postgres://user@host:port/database[?schema=name])')
    .option('--tenant <name>', "the tenant this team's log becomes on the target", 'default')
    .option('--json', 'print the result as JSON')
    .action(
      action(async (opts: { to: string; tenant: string; json?: boolean }, cmd: Command) => {
        const to = parseStore(opts.to);
        if (to === null) throw new CliError('--to must be a postgres:// URL');
        await migrate(globals(cmd).dataDir, to, opts);
      }),
    );
}

async function migrate(dataDir: string, to: string, opts: { tenant: string; json?: boolean }): Promise<void> {
  const [{ verifyChain }, { readAllRows, readHead }, { PgEventStore }, { sequenceMarks }, { productProjections }] =
    await Promise.all([
      import('../engine/verify.js'),
      import('../engine/store.js'),
      import('../engine/pg/store.js'),
      import('../engine/ids.js'),
      import('../app.js'),
    ]);
  const db = await openExistingStore(dataDir);
  // The rows go in as they are; the tenant's read models are built once at the end, in memory and copied
  // in (pg/memory-build.ts) — tens of times faster than projecting each batch statement by statement.
  const target = await PgEventStore.open(to, { projections: productProjections, skipStartupRebuild: true });
  const rowsOnly = await PgEventStore.open(to);
  try {
    const source = verifyChain(db);
    if (!source.ok)
      throw new CliError(
        `the SQLite log does not verify (position ${source.position}: ${source.message}); nothing copied`,
      );
    const start = await target.head(opts.tenant);
    const same =
      start.position === 0 || readAllRows(db, { after: start.position - 1, limit: 1 })[0]?.hash === start.hash;
    if (!same)
      throw new CliError(
        `tenant ${opts.tenant} on the target already holds another log (head ${start.position}): choose another --tenant`,
      );
    await copyRows(db, rowsOnly, opts.tenant, start.position, source.head.position, opts.json === true);
    // Ids that name no stream (messages…) are in the SQLite log's marks only: they move too.
    await target.importSequences(opts.tenant, sequenceMarks(db));
    const copied = (await target.head(opts.tenant)).position - start.position;
    if (copied > 0) {
      // PostgreSQL's planner knows nothing of rows loaded this fast until autovacuum gets to them: what reads
      // the tenant next (the rebuild, a node's first copy) is planned on the real sizes.
      await target.pool.query('ANALYZE es_events, es_commands');
      await target.rebuild([], opts.tenant);
    } else await target.readModels.prepare(target.pool, opts.tenant);
    const moved = (await target.verify(opts.tenant)).get(opts.tenant)!;
    const head = readHead(db);
    if (!moved.ok) throw new CliError(`the copy does not verify: ${moved.message}`);
    if (moved.head.hash !== head.hash) throw new CliError('the copy ends at another head than the SQLite log');
    const result = {
      tenant: opts.tenant,
      events: moved.events,
      copied: moved.events - start.position,
      head,
      store: target.target.display,
      readSchema: target.readModels.schemaOf(opts.tenant),
    };
    if (opts.json) printJson(result);
    else
      process.stdout.write(
        `ok: ${result.copied} events copied to tenant ${opts.tenant} at ${result.store}; ` +
          `both chains verify, head ${head.hash} at position ${head.position}; read models in schema ${result.readSchema}\n`,
      );
  } finally {
    db.close();
    await target.close();
    await rowsOnly.close();
  }
}

/**
 * The log's rows after `from`, in batches that each commit on their own and must continue the target's
 * chain. A batch ends where a command ends: the store records each command once, with all its rows, and
 * refuses a batch whose command it already holds (a 5,000-row cut through a big command did).
 */
async function copyRows(db: Database, target: PgEventStore, tenant: string, from: number, to: number, quiet: boolean) {
  const { readAllRows } = await import('../engine/store.js');
  const bar = quiet ? progressBar('') : progressBar('migrating');
  for (let after = from; ;) {
    const rows = readAllRows(db, { after, limit: BATCH });
    const full = rows.length === BATCH;
    if (full) rows.push(...restOfCommand(db, rows[rows.length - 1]!, readAllRows));
    if (rows.length > 0) await target.importRows(tenant, rows);
    bar.update(after + rows.length, to);
    if (!full) break;
    after = rows[rows.length - 1]!.position;
  }
  bar.stop();
}

/** The rows after `last` that belong to its command. */
function restOfCommand(db: Database, last: EventRow, read: typeof ReadAllRows): EventRow[] {
  const command = commandOf(last);
  const rest: EventRow[] = [];
  for (let after = last.position; ;) {
    const more = read(db, { after, limit: 500 });
    const other = more.findIndex((r) => commandOf(r) !== command);
    rest.push(...(other === -1 ? more : more.slice(0, other)));
    if (other !== -1 || more.length < 500) return rest;
    after = more[more.length - 1]!.position;
  }
}

const commandOf = (row: EventRow): string => (JSON.parse(row.meta) as { commandId: string }).commandId;
