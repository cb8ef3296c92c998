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
