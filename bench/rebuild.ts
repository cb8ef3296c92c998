import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from '../src/engine/engine.js';
import { figure, prng, type Figure } from './util.js';
import { CardWorkload } from './workload.js';

/**
 * Seeds a log of `events` card events (about ten per stream), then measures rebuild and verify in a
 * fresh child process so the peak RSS is the rebuild's own.
 */
export function benchRebuild(dir: string, events: number): Record<string, Figure> {
  const file = join(dir, 'rebuild.db');
  seed(file, events);
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./rebuild-child.ts', import.meta.url)), file],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  if (child.status !== 0) throw new Error(`rebuild benchmark failed: ${child.stderr.trim().split('\n').pop()}`);
  const r = JSON.parse(child.stdout) as {
    events: number;
    rebuildSeconds: number;
    rawRebuildSeconds: number;
    verifySeconds: number;
    rawVerifySeconds: number;
    rssBefore: number;
    rssPeak: number;
  };
  return {
    rebuild_events_per_s: figure(r.events / r.rebuildSeconds, 'events/s', r.events / r.rawRebuildSeconds),
    verify_events_per_s: figure(r.events / r.verifySeconds, 'events/s', r.events / r.rawVerifySeconds),
    rebuild_rss_mb: figure(r.rssPeak, 'MB', r.rssBefore),
  };
}

/** Appends at least `events` events through the engine, 1000 commands per transaction (seeding is not measured). */
function seed(file: string, events: number): void {
  const engine = Engine.open({ file, durability: 'normal' });
  const workload = new CardWorkload(engine, prng(7));
  try {
    workload.seed(Math.min(1000, Math.ceil(events / 10)), 9);
    while (engine.head().position < events) {
      engine.transact({ actor: 'bench' }, () => {
        for (let i = 0; i < 1000; i++) workload.step();
      });
    }
  } finally {
    engine.close();
  }
}
