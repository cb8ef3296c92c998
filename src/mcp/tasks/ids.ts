import { createHmac, timingSafeEqual } from 'node:crypto';
import type { App } from '../../app.js';

/**
 * MCP task ids (the 2026-07-28 tasks extension, SEP-2663). A task is never a row of its own: it names
 * the Colony record it follows in the log — an execute_agent run, or one hand-in of a task whose command
 * verifier decides it — and its state is read from there on every `tasks/get`, in any process, after
 * any restart. The id says which record, plus a MAC under a key derived from the store's master key:
 * the SEP wants ids no third party can guess or enumerate, and a run number alone is both. The MAC is
 * not the access check — every request still checks who may see the record (runs.ts, verifications.ts);
 * it only makes a made-up id fail exactly like an unknown one.
 *
 *   run-<runId>-<mac>          execute_agent's run
 *   verify-<taskId>.<v>-<mac>  the verdict on the hand-in recorded at version v of task-<taskId>
 */
export type TaskRef = { kind: 'run'; runId: number } | { kind: 'verification'; taskId: number; version: number };

const MAC_BYTES = 16;
const keys = new WeakMap<App, Buffer>();

function keyOf(app: App): Buffer {
  let key = keys.get(app);
  // A key of its own (not the master key itself): a MAC must never be usable as anything else.
  if (!key) keys.set(app, (key = createHmac('sha256', app.key).update('colony/mcp-task-ids/v1').digest()));
  return key;
}

const bodyOf = (ref: TaskRef): string =>
  ref.kind === 'run' ? `run-${ref.runId}` : `verify-${ref.taskId}.${ref.version}`;
const macOf = (app: App, body: string): Buffer =>
  createHmac('sha256', keyOf(app)).update(body).digest().subarray(0, MAC_BYTES);

export function taskIdOf(app: App, ref: TaskRef): string {
  const body = bodyOf(ref);
  return `${body}-${macOf(app, body).toString('base64url')}`;
}

const SHAPE = /^(run-(\d{1,15})|verify-(\d{1,15})\.(\d{1,15}))-([A-Za-z0-9_-]{22})$/;

/** The record an id names, or null when it is not one this store minted (malformed, or its MAC is wrong). */
export function parseTaskId(app: App, id: string): TaskRef | null {
  const m = SHAPE.exec(id);
  if (!m) return null;
  const mac = Buffer.from(m[5]!, 'base64url');
  if (mac.length !== MAC_BYTES || !timingSafeEqual(mac, macOf(app, m[1]!))) return null;
  return m[2] !== undefined
    ? { kind: 'run', runId: Number(m[2]) }
    : { kind: 'verification', taskId: Number(m[3]), version: Number(m[4]) };
}
