import type { Command } from 'commander';
import { databaseFile } from '../config.js';
import { action, checkOwnerName, globals, printJson } from './shared.js';

/** `colony init`: the data dir, the store, the master key and the owner — whose token is printed once. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description('create the data dir, the event store, the master key and the owner (prints the owner token once)')
    .option('--owner <name>', 'the owner\'s name', 'owner')
    .option('--json', 'print {"owner","token"} as JSON')
    .action(
      action(async (opts: { owner: string; json?: boolean }, cmd: Command) => {
        const { dataDir, durability } = globals(cmd);
        checkOwnerName(opts.owner);
        const [{ openApp }, { createOwner, ownerOf }] = await Promise.all([import('../app.js'), import('../actions/principals.js')]);
        const app = openApp({ dataDir, durability });
        try {
          const existing = ownerOf(app);
          if (existing) {
            if (opts.json) return printJson({ data: dataDir, database: databaseFile(dataDir), owner: existing.name, created: false });
            process.stdout.write(`Colony is already initialized in ${dataDir} (owner "${existing.name}"); no new token was made — use "colony token rotate"\n`);
            return;
          }
          const { token } = createOwner(app, opts.owner, { actor: 'system' });
          if (opts.json) return printJson({ owner: opts.owner, token, data: dataDir, created: true });
          process.stdout.write(`Initialized Colony in ${dataDir}\nOwner "${opts.owner}" token (shown once, keep it): ${token}\n`);
        } finally {
          app.engine.close();
        }
      }),
    );
}
