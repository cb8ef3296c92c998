import type { Engine } from '../../engine/engine.js';
import type { VerificationRecord } from '../../engine/last-verify.js';

/**
 * How the log's integrity reads to a person, the same in system_health and the console's integrity page:
 * the last `colony verify` and each projection's state against the chain's head.
 */
export function verificationView(v: VerificationRecord | null | 'unreadable') {
  if (v === null) return { state: 'never' as const };
  if (v === 'unreadable') return { state: 'unreadable' as const };
  return {
    state: v.ok ? ('ok' as const) : ('failed' as const),
    at: v.at,
    position: v.position,
    hash: v.hash,
    ...(v.ok ? {} : { reason: v.reason, message: v.message }),
  };
}

/** OK: applied up to the head by the code's version of the projection; BEHIND otherwise (rebuild or catch up). */
export function projectionStates(engine: Pick<Engine, 'projections' | 'db'>, headPosition: number) {
  return engine.projections.status(engine.db).map((s) => ({
    name: s.name,
    position: s.position,
    code_version: s.codeVersion,
    stored_version: s.storedVersion,
    stale: s.stale,
    state:
      s.position >= headPosition && !s.stale && s.storedVersion === s.codeVersion
        ? ('OK' as const)
        : ('BEHIND' as const),
  }));
}

/**
 * What keeps this node from serving current data: on a PostgreSQL store, its follower failing to bring in
 * other nodes' events (`follow`: cli/serve-jobs.ts); on any store, a sync the disk did not confirm, after
 * which Colony takes no more writes (`writes_stopped`: engine/wal-sync.ts). Shown by `GET /health` (503
 * `degraded`), system_health and the console's "Needs you" — a fixed sentence, the error's code, since when
 * and how many attempts (writes refused, for `writes_stopped`), never the error's text (kept for the log):
 * `/health` needs no token and sandboxed runs reach it through the gate.
 */
export interface NodeProblem {
  kind: 'follow' | 'writes_stopped';
  reason: string;
  code: string;
  since: Date;
  attempts: number;
}

/** This node's problem as every surface shows it (GET /health, system_health, "Needs you"): no error text. */
export function nodeProblemView(p: NodeProblem | null) {
  if (!p) return null;
  return { kind: p.kind, reason: p.reason, code: p.code, since: p.since.toISOString(), attempts: p.attempts };
}

/** Writes stopped by a failed sync outrank a follower's trouble: nothing this node is asked to do can be kept. */
export function writesStopped(engine: Engine): NodeProblem | null {
  const stop = engine.group.wal.stopped;
  if (!stop) return null;
  return {
    kind: 'writes_stopped',
    reason:
      'the disk did not confirm a write: Colony takes no more writes, and the last ones may be lost if the machine stops; restart it once the disk is sound',
    code: 'ErrWritesStopped',
    since: stop.since,
    attempts: stop.refused,
  };
}
