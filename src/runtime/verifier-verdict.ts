import type { LimitKind } from '../events/sandbox.js';
import type { ProcessResult } from './harness.js';

/** How much of a verifier command's output its verdict keeps: the last 4 KiB. */
export const OUTPUT_TAIL_BYTES = 4096;

export interface CommandVerdict {
  verdict: 'approve' | 'reject';
  reason: string;
  output: string;
}

/**
 * The verdict of a finished verifier command: exit 0 approves; any other exit, a timeout, a command that
 * could not start or one that ran into a confinement limit rejects, with the reason in words.
 */
export function commandVerdict(r: ProcessResult, limit: LimitKind | null, timeoutSec: number): CommandVerdict {
  const tail = Buffer.from(r.tail, 'utf8');
  const output = (tail.length > OUTPUT_TAIL_BYTES ? tail.subarray(tail.length - OUTPUT_TAIL_BYTES) : tail).toString(
    'utf8',
  );
  // A check that ran into a limit did not finish its job: no approval, whatever it exited with.
  const verdict = !r.timedOut && !r.spawnError && !limit && r.exitCode === 0 ? 'approve' : 'reject';
  const reason = r.spawnError
    ? `verifier command could not start: ${r.spawnError}`
    : limit
      ? `verifier command ran into its ${LIMIT_WORDS[limit]} limit${r.timedOut ? ` (and timed out after ${timeoutSec}s)` : ''}`
      : r.timedOut
        ? `verifier command timed out after ${timeoutSec}s`
        : r.exitCode === 0
          ? 'verifier command exited 0'
          : `verifier command exited ${r.exitCode ?? `by ${r.signal ?? 'a signal'}`}`;
  return { verdict, reason, output };
}

const LIMIT_WORDS: Record<LimitKind, string> = {
  cpu: 'CPU time',
  memory: 'memory',
  pids: 'process count',
  file_size: 'file size',
  disk: 'disk',
  budget: 'budget',
};
