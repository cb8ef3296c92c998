import type { Command } from 'commander';
import { verifyChain } from '../events/verify.js';
import { action, globals, openExistingStore, printJson, progressBar } from './shared.js';

/** `colony verify`: walks the hash chain; exit 0 when it holds, 1 with the first bad position when not. */
export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description('verify the hash chain of the whole event log')
    .option('--json', 'print the result as JSON')
    .action(
      action((opts: { json?: boolean }, cmd: Command) => {
        const db = openExistingStore(globals(cmd).dataDir);
        const bar = opts.json ? progressBar('') : progressBar('verifying');
        try {
          const result = verifyChain(db, { onProgress: bar.update });
          bar.stop();
          if (opts.json) printJson(result);
          if (result.ok) {
            if (!opts.json) process.stdout.write(`ok: ${result.events} events, chain head ${result.head.hash} at position ${result.head.position}\n`);
          } else {
            process.stderr.write(`colony: verify failed at position ${result.position}: ${result.reason} (${result.message})\n`);
            process.exitCode = 1;
          }
        } finally {
          db.close();
        }
      }),
    );
}
