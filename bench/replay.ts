import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { openApp, productProjections } from '../src/app.js';
import { goalSnapshot } from '../src/projections/goal-snapshot.js';
import { replayTo } from '../src/engine/replay.js';
import type { App } from '../src/app.js';
import { createTeam, seedGoal, workTask, type Team } from './goal-data.js';
import { figure, median, type Figure } from './util.js';

/**
 * replay_ms: what `colony replay --position` does — replayTo() the first `events` events of a log that
 * is one goal's life (its tree proposed and approved, then leaf after leaf claimed, charged and done by
 * ten agents) into a fresh in-memory store, then goalSnapshot() on it. Baseline: reading the same
 * `events` rows raw (`SELECT * FROM es_events WHERE position <= ?`) from the same connection. Runs
 * alternate; medians count. `then` gets the store while it is still open (the console's scrub bench
 * reuses this goal).
 */
export async function benchReplay(
  dir: string,
  events: number,
  runs: number,
  then?: (app: App, team: Team, goalId: number) => Promise<Record<string, Figure>>,
): Promise<Record<string, Figure>> {
  const data = join(dir, 'replay');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data, durability: 'normal' });
  try {
    const team = createTeam(app, 10, ['claim_task', 'complete_task', 'report_usage']);
    const roots = Math.ceil(events / 420); // a 100-task root and its 90 leaves' lives are about 460 events
    const { goalId, leaves } = seedGoal(app, team.owner, 1, { roots, children: 9, leaves: 10 });
    for (let i = 0; app.engine.head().position < events; i += 100) {
      if (i >= leaves.length)
        throw new Error(`the replay goal has ${app.engine.head().position} events, fewer than ${events}`);
      app.engine.transact({ actor: 'system' }, () => {
        for (let k = i; k < Math.min(leaves.length, i + 100); k++)
          workTask(app, team.agents[k % team.agents.length]!.speaker, leaves[k]!, k);
      });
    }
    const source = app.engine.db;
    const raw = source.prepare('SELECT * FROM es_events WHERE position <= ? ORDER BY position');
    const replay = () => {
      const mem = replayTo(source, events, productProjections);
      try {
        const snap = goalSnapshot(mem.db, goalId);
        if (!snap) throw new Error(`goal ${goalId} is missing at position ${events}`);
        return snap;
      } finally {
        mem.close();
      }
    };
    const times = { replay: [] as number[], raw: [] as number[] };
    for (let r = 0; r < runs + 1; r++) {
      let t0 = performance.now();
      if (raw.all(events).length !== events) throw new Error(`the log holds fewer than ${events} events`);
      const rawMs = performance.now() - t0;
      t0 = performance.now();
      replay();
      const replayMs = performance.now() - t0;
      if (r > 0) {
        // the first run of each warms up
        times.raw.push(rawMs);
        times.replay.push(replayMs);
      }
    }
    const replayMs = {
      ...figure(median(times.replay), 'ms', median(times.raw)),
      data: `${events.toLocaleString('en-US')} events`,
    };
    return { replay_ms: replayMs, ...(then ? await then(app, team, goalId) : {}) };
  } finally {
    app.engine.close();
  }
}
