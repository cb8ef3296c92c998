import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { configureRuntime } from '../src/actions/agent-runtime.js';
import { createOwner, registerAgent } from '../src/actions/principals.js';
import { openApp } from '../src/app.js';
import { startRuntime } from '../src/runtime/index.js';
import { figure, median, type Figure } from './util.js';

/**
 * run_overhead_ms: what Colony adds to a run of `true` — from the wake-up to RunFinished committed:
 * the gates and RunQueued, RunStarted with the prompt, the clean environment, the secrets lookup, the
 * process, its end recorded (durability FULL). Value = median(wake → RunFinished) − median(raw spawn);
 * baseline = the raw spawn alone (`/bin/sh -c true` with the same stdio, waited for), alternated by round.
 * Target < 50 ms.
 */
export async function benchRunOverhead(dir: string, o: { runs: number; rounds: number }): Promise<Figure> {
  const data = join(dir, 'run-overhead');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data });
  const owner = createOwner(app, 'bench-owner', { actor: 'system' });
  const agent = registerAgent(app, {
    name: 'truthful', ownerId: owner.userId, model: 'none', systemPrompt: 'You run true and exit.', toolScope: ['whoami'], tier: 'supervised',
    command: 'true', parentId: null, spawnDepth: 0,
  }, { actor: 'system' });
  configureRuntime(app, owner.userId, agent.agentId, { cooldownSec: 0, dailyRunBudget: 1_000_000 }, 'bench', { actor: 'system' });
  // No agent here calls back, so the MCP URL is never dialled.
  const runtime = startRuntime(app, { mcpUrl: 'http://127.0.0.1:9/mcp', pollMs: 1000 });
  const reactor = runtime.reactor!;
  try {
    const oneRun = async () => {
      const t0 = performance.now();
      const { run } = reactor.wake({ agentId: agent.agentId, source: 'manual', by: 'bench' });
      await firstValueFrom(app.engine.bus.events$.pipe(filter((e) => e.type === 'RunFinished' && (e.data as { runId: number }).runId === run.runId)));
      return performance.now() - t0;
    };
    const rawSpawn = () => new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn('/bin/sh', ['-c', 'true'], { cwd: data, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { PATH: process.env.PATH } });
      child.stdin.on('error', () => undefined);
      child.stdin.end('prompt');
      child.once('error', reject);
      child.once('close', () => resolve(performance.now() - t0));
    });
    for (let i = 0; i < 5; i++) { await oneRun(); await rawSpawn(); }
    const colony: number[] = [];
    const raw: number[] = [];
    for (let r = 0; r < o.rounds; r++) {
      for (let i = 0; i < o.runs; i++) raw.push(await rawSpawn());
      for (let i = 0; i < o.runs; i++) colony.push(await oneRun());
    }
    const base = median(raw);
    return { ...figure(Math.max(0, median(colony) - base), 'ms', base), data: `${o.runs * o.rounds} runs of true, FULL` };
  } finally {
    await reactor.idle();
    runtime.stop();
    app.engine.close();
  }
}
