import type { Command } from 'commander';
import { action, CliError, formatRate, globals, printJson, progressBar, requireInitialized } from './shared.js';

/**
 * `colony rebuild [--projection NAME]`: rebuilds read tables from the log, blue-green. On a PostgreSQL
 * store (`--store`), every tenant's read schema (or one's, `--tenant`) while the nodes keep serving.
 */
export function registerRebuild(program: Command): void {
  program
    .command('rebuild')
    .description('rebuild projections from the event log (all, or one with --projection)')
    .option('--projection <name>', 'rebuild only this projection')
    .option('--tenant <name>', 'on a PostgreSQL store: rebuild only this tenant')
    .option('--json', 'print the result as JSON')
    .action(
      action(async (opts: { projection?: string; tenant?: string; json?: boolean }, cmd: Command) => {
        const { dataDir, durability, store } = globals(cmd);
        if (store !== null) return rebuildPostgres(store, opts);
        if (opts.tenant !== undefined) throw new CliError('--tenant is for a PostgreSQL store (--store postgres://…)');
        requireInitialized(dataDir);
        const { openEngine } = await import('../app.js');
        const engine = openEngine({ dataDir, durability, skipStartupRebuild: true });
        const bar = progressBar('rebuilding');
        try {
          const report = engine.rebuild(opts.projection ? [opts.projection] : [], { onProgress: bar.update });
          bar.stop();
          if (opts.json) return printJson(report);
          process.stdout.write(
            `rebuilt ${report.projections.join(', ') || 'no projections'}: ${report.events} events in ` +
              `${report.seconds.toFixed(2)} s, ${formatRate(report.eventsPerSecond)} events/s\n`,
          );
        } finally {
          bar.stop();
          engine.close();
        }
      }),
    );
}

async function rebuildPostgres(url: string, opts: { projection?: string; tenant?: string; json?: boolean }) {
  const [{ PgEventStore }, { productProjections }] = await Promise.all([
    import('../engine/pg/store.js'),
    import('../app.js'),
  ]);
  // What it rebuilds is what it was asked to: not first whatever opening would bring up to date.
  const store = await PgEventStore.open(url, { projections: productProjections, skipStartupRebuild: true });
  try {
    if (opts.tenant !== undefined && !(await store.tenants()).includes(opts.tenant))
      throw new CliError(`no tenant named ${JSON.stringify(opts.tenant)} on this store`);
    const started = performance.now();
    const report = await store.rebuild(opts.projection ? [opts.projection] : [], opts.tenant);
    const seconds = (performance.now() - started) / 1000;
    if (opts.json) return printJson({ ...report, seconds });
    process.stdout.write(
      `rebuilt ${report.rebuilt.join(', ') || 'no projections'} for ${opts.tenant ? `tenant ${opts.tenant}` : 'every tenant'}: ` +
        `${report.events} events in ${seconds.toFixed(2)} s\n`,
    );
  } finally {
    await store.close();
  }
}
