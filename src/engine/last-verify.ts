import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainHead } from './store.js';
import type { VerifyResult } from './verify.js';

/**
 * The outcome of the last `colony verify`, kept beside the database in `<data>/last-verify.json` (not in
 * it: an auditor's check must not change what it checks) so that system_health can say when the chain
 * was last verified, up to which position, and whether it held.
 */
export interface VerificationRecord {
  at: string;
  ok: boolean;
  /** The head position it verified up to, or the first bad position. */
  position: number;
  /** The head hash it verified; null when it failed. */
  hash: string | null;
  events: number;
  reason?: string;
  message?: string;
}

export const lastVerifyFile = (dataDir: string): string => join(dataDir, 'last-verify.json');

export function recordVerification(dataDir: string, result: VerifyResult, at: string): void {
  const record: VerificationRecord = result.ok
    ? { at, ok: true, position: result.head.position, hash: result.head.hash, events: result.events }
    : {
        at,
        ok: false,
        position: result.position,
        hash: null,
        events: result.events,
        reason: result.reason,
        message: result.message,
      };
  const file = lastVerifyFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  renameSync(tmp, file); // readers never see half a file
}

/** The last verification; null when there was none; 'unreadable' when the file is there but is not one. */
export function readLastVerification(dataDir: string): VerificationRecord | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(lastVerifyFile(dataDir), 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  try {
    const r = JSON.parse(text) as VerificationRecord;
    return typeof r.at === 'string' && typeof r.ok === 'boolean' && Number.isInteger(r.position) ? r : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/**
 * The start-up check's anchor (src/evidence/chain-check.ts): the head it last verified, kept beside the database
 * in `<data>/chain-anchor.json` (not in it, so that deleting rows and then fixing the database's own
 * bookkeeping is still caught) and apart from last-verify.json (a tail check is not a full audit).
 */
export interface ChainAnchor extends ChainHead {
  at: string;
}

export const chainAnchorFile = (dataDir: string): string => join(dataDir, 'chain-anchor.json');

/** The anchor file; null when there is none; 'unreadable' when it is there but is not one. */
export function readChainAnchor(dataDir: string): ChainAnchor | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(chainAnchorFile(dataDir), 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  try {
    const a = JSON.parse(text) as ChainAnchor;
    return Number.isSafeInteger(a.position) && a.position >= 0 && /^[0-9a-f]{64}$/.test(a.hash) ? a : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

export function writeChainAnchor(dataDir: string, head: ChainHead, at: string): void {
  const file = chainAnchorFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ position: head.position, hash: head.hash, at } satisfies ChainAnchor)}\n`, {
    mode: 0o600,
  });
  renameSync(tmp, file); // readers never see half a file
}
