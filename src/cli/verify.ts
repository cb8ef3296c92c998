import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { SignedCheckpoint } from '../evidence/checkpoint.js';
import type { ChainHead } from '../engine/store.js';
import type { VerifyResult } from '../engine/verify.js';
import { lastVerifyFile, readChainAnchor, recordVerification } from '../engine/last-verify.js';
import { action, CliError, globals, openExistingStore, printJson, progressBar } from './shared.js';
import { oneLine } from '../terminal.js';

/** `colony verify`: walks the hash chain; exit 0 when it holds, 1 with the first bad position when not. */
export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description('verify the hash chain of the whole event log')
    .option('--json', 'print the result as JSON')
    .option('--tenant <name>', 'on a PostgreSQL store: only this tenant (default: every tenant)')
    .option(
      '--since <file>',
      'also prove that the log extends this signed checkpoint (the JSON of "colony checkpoint --json", or a goal bundle) — catches a fully re-hashed chain',
    )
    .option(
      '--expect-head <position:hash>',
      'also require this head, recorded earlier, to be unchanged (catches a re-hashed chain); default: the head the last start-up check verified',
    )
    .action(
      action(async (opts: VerifyOptions, cmd: Command) => {
        const { dataDir, store } = globals(cmd);
        if (store !== null) return verifyPostgres(store, opts);
        const expectHead = opts.expectHead === undefined ? startAnchor(dataDir) : parseHead(opts.expectHead);
        if (opts.since !== undefined) return verifySinceCommand(dataDir, opts.since, expectHead, opts.json === true);
        const [{ verifyChain }, { acceptedBreaks, describeAcceptance }] = await Promise.all([
          import('../engine/verify.js'),
          import('../engine/anchor.js'),
        ]);
        const db = await openExistingStore(dataDir);
        const bar = opts.json ? progressBar('') : progressBar('verifying');
        try {
          const result = verifyChain(db, { onProgress: bar.update, expectHead });
          bar.stop();
          record(dataDir, result);
          // An audit keeps reporting a break for good; it also says which breaks an operator accepted, when and who.
          const accepted = result.ok ? [] : acceptedBreaks(db);
          if (opts.json) printJson(accepted.length > 0 ? { ...result, accepted } : result);
          if (result.ok) {
            if (!opts.json)
              process.stdout.write(
                `ok: ${result.events} events, chain head ${result.head.hash} at position ${result.head.position}\n`,
              );
          } else {
            process.stderr.write(
              `colony: verify failed at position ${result.position}: ${result.reason} (${result.message})\n`,
            );
            if (result.reason !== 'accepted_break')
              for (const b of accepted) process.stderr.write(`colony: note: ${describeAcceptance(b)}\n`);
            process.exitCode = 1;
          }
        } finally {
          db.close();
        }
      }),
    );
}

interface VerifyOptions {
  json?: boolean;
  expectHead?: string;
  since?: string;
  tenant?: string;
}

/** On PostgreSQL every tenant has its own chain: each is walked, and one bad chain fails the whole check. */
async function verifyPostgres(url: string, opts: VerifyOptions): Promise<void> {
  if (opts.since !== undefined || opts.expectHead !== undefined)
    throw new CliError('--since and --expect-head check the SQLite log; on a PostgreSQL store use --tenant');
  const { PgEventStore } = await import('../engine/pg/store.js');
  const store = await PgEventStore.open(url);
  try {
    if (opts.tenant !== undefined && !(await store.tenants()).includes(opts.tenant))
      throw new CliError(`tenant ${JSON.stringify(opts.tenant)} has no events on ${store.target.display}`);
    const results = await store.verify(opts.tenant);
    const failed = [...results].filter(([, r]) => !r.ok);
    if (opts.json) printJson({ ok: failed.length === 0, tenants: Object.fromEntries(results) });
    for (const [tenant, r] of results) {
      if (r.ok && !opts.json)
        process.stdout.write(
          `ok: tenant ${oneLine(tenant)}: ${r.events} events, chain head ${r.head.hash} at position ${r.head.position}\n`,
        );
      if (!r.ok)
        process.stderr.write(
          `colony: verify failed for tenant ${oneLine(tenant)} at position ${r.position}: ${r.reason} (${r.message})\n`,
        );
    }
    if (results.size === 0 && !opts.json) process.stdout.write(`ok: no tenant has events on ${store.target.display}\n`);
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    await store.close();
  }
}

async function verifySinceCommand(
  dataDir: string,
  file: string,
  expectHead: ChainHead | undefined,
  json: boolean,
): Promise<void> {
  const signed = await readCheckpointFile(file);
  const { verifySince } = await import('../evidence/since.js');
  const db = await openExistingStore(dataDir);
  const bar = json ? progressBar('') : progressBar('verifying');
  try {
    const result = verifySince(db, signed, { onProgress: bar.update, expectHead });
    bar.stop();
    if (result.chain) record(dataDir, result.chain);
    if (json) printJson(result);
    if (result.ok) {
      if (!json) {
        process.stdout.write(
          `ok: ${result.chain.events} events, chain head ${result.chain.head.hash} at position ${result.chain.head.position}; ` +
            `the log extends the checkpoint of ${result.from} events signed by ${signed.checkpoint.body.keyId} ` +
            `(consistency proof of ${result.consistency.length} hashes to root ${result.root})\n`,
        );
      }
      return;
    }
    process.stderr.write(`colony: verify --since failed: ${result.reason} (${oneLine(result.message)})\n`);
    process.exitCode = 1;
  } finally {
    db.close();
  }
}

/** A checkpoint file (`colony checkpoint --json`) or a bundle: both carry {checkpoint: {body, signature}, publicKey}. */
async function readCheckpointFile(file: string): Promise<SignedCheckpoint> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CliError(
      `cannot read the checkpoint ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const { shapeProblem, signedCheckpointShape } = await import('../evidence/bundle-shape.js');
  const problem = shapeProblem(value, signedCheckpointShape);
  if (problem)
    throw new CliError(
      `${file} is not a signed checkpoint (the JSON of "colony checkpoint --json", or a goal bundle): ${problem}`,
    );
  return value as SignedCheckpoint;
}

/** Kept for system_health; a data dir that cannot be written (a read-only copy under audit) still verifies. */
function record(dataDir: string, result: VerifyResult): void {
  try {
    recordVerification(dataDir, result, new Date().toISOString());
  } catch (e) {
    process.stderr.write(
      `colony: warning: could not record the outcome in ${lastVerifyFile(dataDir)}: ${(e as Error).message}\n`,
    );
  }
}

/**
 * Without --expect-head, the head the last start-up check verified (chain-anchor.json): the log must
 * still hold it, so a tail cut after it is caught even when the database's own bookkeeping was fixed.
 */
function startAnchor(dataDir: string): ChainHead | undefined {
  const anchor = readChainAnchor(dataDir);
  return anchor && anchor !== 'unreadable' ? { position: anchor.position, hash: anchor.hash } : undefined;
}

function parseHead(value: string): ChainHead {
  const match = /^(\d+):([0-9a-f]{64})$/.exec(value);
  if (!match) throw new CliError(`--expect-head must be POSITION:HASH (64 lowercase hex digits), not "${value}"`);
  return { position: Number(match[1]), hash: match[2]! };
}
