import { performance } from 'node:perf_hooks';
import { registerAgent, createOwner } from '../../src/actions/principals.js';
import { openApp } from '../../src/app.js';
import { ReplayCache } from '../../src/http/api-replay.js';
import { goalSnapshot } from '../../src/projections/goal-snapshot.js';
import { replayTo } from '../../src/projections/replay.js';
import { tempDir } from '../helpers/engine.js';
import { eventsOfStreams, goalStreams } from '../../src/http/api-queries.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { busyGoal } from './busy-goal.js';

/**
 * How long one step of the time-travel slider takes on a goal with 10,000 events (the figure in the
 * console's report): `node --import tsx test/http/scrub-timing.ts [EVENTS]`. A step is one
 * `ReplayCache.snapshotAt` — what `GET /api/goals/:id/replay` does besides parsing and JSON.
 */
const events = Number(process.argv[2] ?? 10_000);
const scratch = tempDir('colony-scrub-');
const app = openApp({ dataDir: scratch.dir, durability: 'normal' });
const owner = createOwner(app, 'owner', { actor: 'system' });
const worker = registerAgent(app, { name: 'worker', ownerId: owner.userId, model: 'm', systemPrompt: 'You do small, careful tasks.', toolScope: ['whoami'], tier: 'supervised',
  command: null, parentId: null, spawnDepth: 0 }, { actor: 'user:owner' });
let t = performance.now();
const { goalId, start } = busyGoal(app, worker, events);
const head = app.engine.head().position;
const own = eventsOfStreams(app.engine.db, goalStreams(app.engine.db, getGoal(app.engine.db, goalId)!)).length;
console.log(`built: a goal with ${own} events (its history's stops), log head ${head}, in ${(performance.now() - t).toFixed(0)} ms`);
t = performance.now();
const fresh = replayTo(app.engine.db, head);
goalSnapshot(fresh.db, goalId);
fresh.close();
console.log(`a fresh replayTo(head) + snapshot (what colony replay does): ${(performance.now() - t).toFixed(0)} ms`);

const cache = new ReplayCache(app.engine.db);
t = performance.now();
cache.snapshotAt(goalId, head);
console.log(`first scrub request (cold: replays the whole log once, leaving checkpoints): ${(performance.now() - t).toFixed(0)} ms`);

const stops = eventsOfStreams(app.engine.db, goalStreams(app.engine.db, getGoal(app.engine.db, goalId)!)).map((s) => s.position).filter((p) => p > start);
const pick = (n: number) => Array.from({ length: n }, (_, i) => stops[Math.floor((i * (stops.length - 1)) / (n - 1))]!);
function measure(label: string, positions: number[]): void {
  const times = positions.map((p) => {
    const s = performance.now();
    cache.snapshotAt(goalId, p);
    return performance.now() - s;
  }).sort((a, b) => a - b);
  const q = (f: number) => times[Math.min(times.length - 1, Math.floor(f * times.length))]!.toFixed(1);
  console.log(`${label}: ${times.length} steps, p50 ${q(0.5)} ms, p95 ${q(0.95)} ms, max ${times.at(-1)!.toFixed(1)} ms`);
}
const path = pick(400);
measure('drag backwards (head → start, 400 stops)', [...path].reverse());
measure('drag forwards (start → head, 400 stops)', path);
measure('step back one stop at a time (200 steps from the head)', stops.slice(-200).reverse());
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
measure('random jumps (200)', Array.from({ length: 200 }, () => stops[Math.floor(random() * stops.length)]!));
cache.close();
app.engine.close();
scratch.cleanup();
