import type { Command } from 'commander';
import { openEngine } from '../app.js';
import { databaseFile, isInitialized } from '../config.js';
import { action, globals, printJson } from './shared.js';

/** `colony init`: creates the data dir and the store. Owners and tokens arrive with the MCP issue. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description('create the data directory and the event store (safe to run again)')
    .option('--json', 'print the result as JSON')
    .action(
      action((opts: { json?: boolean }, cmd: Command) => {
        const { dataDir, durability } = globals(cmd);
        const existed = isInitialized(dataDir);
        if (!existed) openEngine({ dataDir, durability }).close();
        if (opts.json) return printJson({ data: dataDir, database: databaseFile(dataDir), created: !existed });
        process.stdout.write(existed ? `Colony is already initialized in ${dataDir}\n` : `Initialized Colony in ${dataDir}\n`);
      }),
    );
}
