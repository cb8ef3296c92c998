import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, globals, printJson } from './shared.js';

/**
 * `colony key show|rotate`: the data dir's Ed25519 signing key, which signs checkpoints. `show` lists every
 * key the log has used (a retired key stays valid for what it signed): hand its output — or just the
 * current public key — to an auditor, who passes it to `verify-bundle --key-file`.
 */
export function registerKey(program: Command): void {
  const key = program.command('key').description('the signing key of checkpoints and goal bundles: show it, rotate it');
  key
    .command('show')
    .description('print the current signing key (public key and fingerprint) and every key the log used before')
    .option(
      '--json',
      'print {current, keys: [{keyId, publicKey, since, retiredAt}]} as JSON (a key file for verify-bundle --key-file)',
    )
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app) => {
          const { currentSigner, signingKeys } = await import('../evidence/keys.js');
          // A log that names its keys shows them even if the key file is not the current one (so it can be told apart).
          if (signingKeys(app.engine.db).current === null) currentSigner(app.engine, globals(cmd).dataDir, 'key show');
          const state = signingKeys(app.engine.db);
          if (opts.json) return printJson({ current: state.current, keys: state.keys });
          for (const k of state.keys) {
            const status = k.keyId === state.current ? 'current' : `retired ${k.retiredAt}`;
            process.stdout.write(`${k.keyId}  ${k.publicKey}  since ${k.since}  ${status}\n`);
          }
        }),
      ),
    );
  key
    .command('rotate')
    .description(
      'move to a new signing key: the old key endorses the new one in the log, and keeps verifying what it signed',
    )
    .option('--reason <text>', 'why (recorded in the log)', 'scheduled rotation')
    .option(
      '--lost',
      'the current key file is lost (missing, or another key in its place): rotate without its endorsement, recorded as such',
    )
    .option('--json', 'print {previous, current, endorsed} as JSON')
    .action(
      action((opts: { reason: string; lost?: boolean; json?: boolean }, cmd: Command) => {
        if (!opts.reason.trim()) throw new CliError('--reason must not be empty');
        return withOwner(
          cmd,
          async (app) => {
            const { rotateSigningKey, replaceLostSigningKey } = await import('../evidence/keys.js');
            const { signCheckpoint } = await import('../evidence/sign.js');
            const { dataDir } = globals(cmd);
            const { previous, next } = (opts.lost ? replaceLostSigningKey : rotateSigningKey)(
              app.engine,
              dataDir,
              opts.reason,
              'cli',
            );
            // A first checkpoint under the new key, so the log's latest statement is already signed by it.
            signCheckpoint(app.engine, dataDir, 'manual', 'key rotate');
            if (opts.json) return printJson({ previous, current: next.keyId, endorsed: !opts.lost });
            process.stdout.write(
              `rotated: ${previous} → ${next.keyId}${opts.lost ? " (without the lost key's endorsement)" : ''}\n`,
            );
          },
          { signingKeyLost: opts.lost === true },
        );
      }),
    );
}
