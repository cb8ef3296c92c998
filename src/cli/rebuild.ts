import type { Command } from 'commander';
import { action, formatRate, globals, printJson, progressBar, requireInitialized } from './shared.js';

/** `colony rebuild [--projection NAME]`: rebuilds read tables from the log, blue-green. */
export function registerRebuild(program: Command): void {
  program
    .command('rebuild')
    .description('rebuild projections from the event log (all, or one with --projection)')
    .option('--projection <name>', 'rebuild only this projection')
    .option('--json', 'print the result as JSON')
    .action(
      action(async (opts: { projection?: string; json?: boolean }, cmd: Command) => {
        const { dataDir, durability } = globals(cmd);
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
