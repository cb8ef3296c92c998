import { hostname, userInfo } from 'node:os';
import { log } from '../log.js';
import { openApp, type App, type AppOptions } from '../app.js';
import type { Engine } from '../engine/engine.js';
import { DomainError } from '../errors.js';
import { acceptChainBreak, latestAcceptance } from '../engine/anchor.js';
import { GENESIS_HASH } from '../engine/hash.js';
import type { ChainHead } from '../engine/store.js';
import { verifyChain } from '../engine/verify.js';
import { checkLatestCheckpoint } from './start-check.js';
import { newCommandId } from '../engine/ids.js';
import { chainAnchorFile, readChainAnchor, writeChainAnchor } from '../engine/last-verify.js';
import type { RebuildReport } from '../engine/rebuild.js';

/**
 * The start-up chain check of `colony serve` and `colony stdio` (the chain is checked on every
 * start). It walks only the tail: from the last verified anchor to the head, with `verifyChain`'s
 * anchored walk — the anchor's row still holds its hash, every row after it links, hashes and keeps its
 * stream's version sequence, and the head is the `$log` anchor (position and hash). A broken chain
 * refuses the start, unless the operator accepts it: then the acceptance is recorded in the log
 * (ChainBreakAccepted), the read tables are rebuilt from the log as it is, and the anchor moves.
 *
 * The anchor lives in `<data>/chain-anchor.json`, outside the database: an attacker who deletes rows
 * and then fixes the database's own bookkeeping (`$log`) still has to find and fix this file too. It is
 * not `last-verify.json`: that one records the auditor's full walks (system_health reports it), and a
 * start-up check of the tail is not one. The anchor is the later of this file and the log's last
 * acceptance (which survives a crash between recording it and writing the file); with neither, the
 * walk starts at the genesis.
 */
export interface StartCheckOptions {
  dataDir: string;
  command: 'serve' | 'stdio';
  /** `--accept-broken-chain`: record the break and go on instead of refusing. */
  acceptBroken: boolean;
  onProgress?: (checked: number, total: number) => void;
  /** Called when the check is over, passed or not (a progress bar stops before the next one starts). */
  checked?: () => void;
  /** Lines for the operator (stderr). */
  say: (line: string) => void;
}

export interface StartCheckReport {
  /** Where the walk started, and how many rows it checked. */
  from: ChainHead;
  checked: number;
  /** The new anchor. */
  head: ChainHead;
  /** Set when a break was accepted: the position of the ChainBreakAccepted event. */
  acceptedAt: number | null;
}

/**
 * Opens the data dir for serving: migrations, then the check, then the projections — in that order, so
 * no projection applies a row of a log the check refuses, and an accepted break's rebuild is this one.
 */
export function openCheckedApp(options: AppOptions & StartCheckOptions): {
  app: App;
  check: StartCheckReport;
  rebuild: RebuildReport | null;
} {
  // On a PostgreSQL store the node's copy was chain-checked row by row as it came in (engine/replica.ts),
  // and its head against the store's chain on open (engine/pg/copy-file.ts); "colony verify --store"
  // walks the store itself.
  if (options.store) {
    const app = openApp(options);
    const head = app.engine.head();
    const { caughtUpOnOpen: events, db } = app.engine;
    log.info(
      { tenant: options.store.tenant, copy: db.name, resumedAt: head.position - events, broughtIn: events },
      `the copy of tenant ${options.store.tenant} resumed at position ${head.position - events}: ${events} events brought in from the store`,
    );
    return {
      app,
      check: { from: { position: 0, hash: GENESIS_HASH }, checked: head.position, head, acceptedAt: null },
      rebuild: null,
    };
  }
  const app = openApp({ ...options, skipStartupRebuild: true });
  try {
    let check: StartCheckReport;
    try {
      check = checkChainOnStart(app.engine, options);
    } finally {
      options.checked?.();
    }
    return { app, check, rebuild: app.engine.ensureProjections(options.rebuild) };
  } catch (e) {
    app.engine.close();
    throw e;
  }
}

/** Runs the check on an engine that has migrated but not yet brought its projections up to date. */
export function checkChainOnStart(engine: Engine, options: StartCheckOptions): StartCheckReport {
  const { db } = engine;
  const from = startAnchor(engine, options);
  const walked = verifyChain(db, { from, onProgress: options.onProgress });
  const at = engine.clock().toISOString();
  // The chain's tail holds: the latest signed checkpoint must hold too (a re-hashed log fails it).
  const signed = walked.ok ? checkLatestCheckpoint(db).problem : null;
  if (walked.ok && !signed) {
    writeChainAnchor(options.dataDir, walked.head, at);
    return { from, checked: walked.events, head: walked.head, acceptedAt: null };
  }
  const result = walked.ok
    ? { position: signed!.position, reason: 'checkpoint_mismatch', message: signed!.message, events: walked.events }
    : walked;
  const where = walked.ok
    ? 'against the latest signed checkpoint'
    : from.position === 0
      ? 'from the genesis'
      : `from the verified anchor at position ${from.position}`;
  if (!options.acceptBroken) {
    throw new DomainError(
      'ErrChainBroken',
      `the event log${walked.ok ? ' does not match its signed checkpoint' : "'s hash chain is broken"} at position ${result.position}: ${result.reason} (${result.message}), checked ${where}. ` +
        `Refusing to start: audit the log with "colony verify"; to go on with the log as it is, start again with --accept-broken-chain ` +
        `(the acceptance is recorded in the log and the read tables are rebuilt from it)`,
      { position: result.position, reason: result.reason },
    );
  }
  const meta = { commandId: newCommandId(), actor: 'system', causationId: null, correlationId: null };
  const accepted = {
    position: result.position,
    reason: result.reason,
    message: result.message,
    previousAnchor: from.position === 0 ? null : from,
  };
  const { event, head } = acceptChainBreak(
    db,
    { ...accepted, operator: operator(), command: options.command },
    meta,
    at,
  );
  writeChainAnchor(options.dataDir, head, at);
  engine.bus.publish([event]);
  options.say(
    `colony: accepted the broken chain at position ${result.position} (${result.reason}: ${result.message}), as --accept-broken-chain asked: ` +
      `recorded as ${event.type} at position ${event.position}; every projection is rebuilt from the log, and "colony verify" keeps reporting the break`,
  );
  return { from, checked: result.events, head, acceptedAt: event.position };
}

function startAnchor(engine: Engine, { dataDir, say }: StartCheckOptions): ChainHead {
  const file = readChainAnchor(dataDir);
  // A damaged file only costs a longer walk: the genesis (or the last acceptance) is a sound start too.
  if (file === 'unreadable')
    say(
      `colony: warning: ${chainAnchorFile(dataDir)} is not a chain anchor; checking the chain from the last accepted break or the genesis`,
    );
  const candidates = [typeof file === 'object' && file ? file : null, latestAcceptance(engine.db)].filter(
    (a): a is ChainHead => a !== null,
  );
  const best = candidates.sort((a, b) => b.position - a.position)[0];
  return best ? { position: best.position, hash: best.hash } : { position: 0, hash: GENESIS_HASH };
}

/** Who passed the flag, as the host knows them. */
function operator(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the host name still says where.
  }
  return `${user}@${hostname()}`;
}
