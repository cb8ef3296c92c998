import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { action, CliError, printJson, progressBar } from './shared.js';
import { oneLine } from '../terminal.js';

/**
 * `colony verify-bundle FILE`: checks a goal bundle with no data dir — the checkpoint's signature, every
 * event's hash and inclusion proof, each stream's completeness against the signed heads — then replays the
 * events with Colony's projection code and compares the goal's snapshot. Exit 0 with a summary; exit 1
 * naming the first failing check and the event or stream it is about.
 */
export function registerVerifyBundle(program: Command): void {
  program
    .command('verify-bundle <file>')
    .description(
      "verify a goal bundle offline: signature, hashes, Merkle proofs, completeness, and a replay of the goal's snapshot",
    )
    .option(
      '--key <key>',
      'a public key (base64) or fingerprint (SHA256:…) you trust; repeatable',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--key-file <file>', 'trusted keys: the JSON of "colony key show --json", or one key per line')
    .option('--json', 'print the result as JSON')
    .action(
      action(async (file: string, opts: { key: string[]; keyFile?: string; json?: boolean }) => {
        const trusted = trustedKeys(opts.key, opts.keyFile);
        const bytes = readBytes(file);
        const [{ checkBundle }, { replayBundle }] = await Promise.all([
          import('../evidence/bundle-verify.js'),
          import('../evidence/bundle-replay.js'),
        ]);
        const bar = opts.json ? progressBar('') : progressBar('verifying');
        const checked = checkBundle(bytes, trusted, bar.update);
        bar.stop();
        const failure = checked.ok ? replayBundle(checked.bundle) : checked.failure;
        if (failure) {
          if (opts.json) printJson({ ok: false, failure });
          const where =
            failure.position !== undefined
              ? ` at event ${failure.position}`
              : failure.streamId !== undefined
                ? ` for stream ${failure.streamId}`
                : '';
          process.stderr.write(
            `colony: verify-bundle failed${oneLine(where)}: ${failure.code} (${oneLine(failure.message)})\n`,
          );
          process.exitCode = 1;
          return;
        }
        if (!checked.ok) return;
        const s = checked.summary;
        if (!s.trusted)
          process.stderr.write(
            `colony: warning: the bundle's key ${s.keyId} was not checked against a key you trust (pass --key or --key-file)\n`,
          );
        if (opts.json) return printJson({ ok: true, ...s });
        process.stdout.write(
          `ok: goal ${s.goalId}, ${s.events} events in ${s.streams} streams, checkpoint of ${s.checkpoint.treeSize} events ` +
            `(root ${s.checkpoint.rootHash}) signed at ${oneLine(s.checkpoint.time)} by ${s.keyId}; the replay gives the bundle's snapshot\n`,
        );
      }),
    );
}

function readBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

const KEY = /^(SHA256:[A-Za-z0-9+/]{43}|[A-Za-z0-9+/]{43}=)$/;

/** Null when no key was given: then the bundle's own key is used, with a warning. */
function trustedKeys(keys: string[], keyFile: string | undefined): string[] | null {
  const all = [...keys];
  if (keyFile !== undefined) all.push(...keysInFile(keyFile));
  for (const k of all)
    if (!KEY.test(k)) throw new CliError(`"${k}" is not a public key (base64 of 32 bytes) or a fingerprint (SHA256:…)`);
  if (keyFile !== undefined && all.length === 0) throw new CliError(`${keyFile} holds no key`);
  return all.length > 0 ? all : null;
}

function keysInFile(file: string): string[] {
  const text = readBytes(file).toString('utf8');
  try {
    const json = JSON.parse(text) as { publicKey?: unknown; keys?: { publicKey?: unknown }[] };
    const found = [json.publicKey, ...(Array.isArray(json.keys) ? json.keys.map((k) => k?.publicKey) : [])];
    return found.filter((k): k is string => typeof k === 'string');
  } catch {
    return text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  }
}
