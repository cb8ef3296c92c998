import type { Engine } from '../engine.js';
import { readHead } from '../events/store.js';
import { log } from '../log.js';
import { latestCheckpoint } from './checkpoint.js';
import { signCheckpoint } from './sign.js';

/**
 * `serve` signs checkpoints by itself: when the log has grown by `everyEvents` since the latest one, or
 * when `everyMinutes` have passed since it and the log has grown at all. It looks every few seconds (two
 * one-row reads), so appends by other processes on the same data dir count too. Signing runs outside any
 * command and never fails the server: an error is logged and retried at the next look. 0 turns a trigger off.
 */
export interface AutoCheckpointOptions {
  everyEvents: number;
  everyMinutes: number;
  /** How often to look (tests shorten it). */
  intervalMs?: number;
}

export function startAutoCheckpoints(engine: Engine, dataDir: string, o: AutoCheckpointOptions): { stop(): void; due(): boolean } {
  let failing = false;
  const due = (): boolean => {
    const size = readHead(engine.db).position;
    const latest = latestCheckpoint(engine.db)?.checkpoint.body;
    if (size === 0 || (latest && latest.treeSize >= size)) return false;
    if (!latest) return true;
    const grown = size - latest.treeSize;
    const ageMs = engine.clock().getTime() - Date.parse(latest.time);
    return (o.everyEvents > 0 && grown >= o.everyEvents) || (o.everyMinutes > 0 && ageMs >= o.everyMinutes * 60_000);
  };
  const look = (): void => {
    try {
      if (!engine.db.open || !due()) return;
      const { checkpoint } = signCheckpoint(engine, dataDir, 'auto', 'serve');
      const b = checkpoint.checkpoint.body;
      log.info({ checkpoint: checkpoint.n, treeSize: b.treeSize, root: b.rootHash, keyId: b.keyId }, `signed checkpoint #${checkpoint.n} at ${b.treeSize} events`);
      failing = false;
    } catch (e) {
      if (!failing) log.error({ err: e }, 'could not sign a checkpoint; retrying');
      failing = true;
    }
  };
  if (o.everyEvents === 0 && o.everyMinutes === 0) return { stop() {}, due };
  const timer = setInterval(look, o.intervalMs ?? 5000);
  timer.unref();
  return { stop: () => clearInterval(timer), due };
}
