import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createGoal } from '../src/actions/goals.js';
import { createOwner, registerAgent } from '../src/actions/principals.js';
import { proposeTaskTree } from '../src/actions/proposals.js';
import { configureRuntime } from '../src/actions/runs/agent-controls.js';
import { openApp } from '../src/app.js';
import type { Speaker } from '../src/events/principals.js';
import { startRuntime } from '../src/runtime/index.js';
import { hostSupport } from '../src/runtime/sandbox.js';
import { figure, median, type Figure } from './util.js';

/**
 * budget_stop_ms: from a running agent's usage reaching its goal's budget to its process being gone. The
 * agent prints its cumulative usage as a CLI does (one cent more every 20 ms) and never stops on its own;
 * the run meter records the line that reaches the budget at once (it knows the headroom from its last
 * record), pauses the goal and stops the process (SIGTERM, SIGKILL after the grace) — the figure runs
 * from the start of that record (RunMeter.stoppedAt, the line just read) to the process's close. Confined as agents run by default where the host can (bubblewrap). Baseline: the same
 * loop spawned raw, SIGTERM to its process group → its close. Target < 1 s (the grace is 500 ms).
 */
const LOOP = [
  'cat >/dev/null; i=0',
  'while true; do i=$((i+1))',
  `  printf '{"type":"result","usage":{"input_tokens":%d,"output_tokens":0},"total_cost_usd":%d.%02d}\\n' $((i*10)) $((i/100)) $((i%100))`,
  '  sleep 0.02',
  'done',
].join('\n');
const SYSTEM = { actor: 'system' };

export async function benchBudgetStop(dir: string, o: { runs: number }): Promise<Figure> {
  const data = join(dir, 'budget-stop');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data });
  const owner = createOwner(app, 'bench-owner', SYSTEM);
  const by: Speaker = { key: `user-${owner.userId}`, name: 'bench-owner', tenant: owner.userId };
  const agent = registerAgent(
    app,
    {
      name: 'spender',
      ownerId: owner.userId,
      model: 'none',
      systemPrompt: 'You spend until you are stopped.',
      toolScope: ['whoami'],
      tier: 'autonomous',
      command: LOOP,
      parentId: null,
      spawnDepth: 0,
    },
    SYSTEM,
  );
  configureRuntime(app, owner.userId, agent.agentId, { cooldownSec: 0, dailyRunBudget: 1_000_000 }, 'bench', SYSTEM);
  const stops = new Map<number, number>();
  const runtime = startRuntime(app, {
    mcpUrl: 'http://127.0.0.1:9/mcp',
    pollMs: 1000,
    sandbox: hostSupport().ok ? 'on' : 'off',
    onMeterEnd: (runId, meter) => {
      if (meter.stoppedAt !== null) stops.set(runId, performance.now() - meter.stoppedAt);
    },
  });
  const reactor = runtime.reactor!;
  try {
    const oneRun = async (n: number): Promise<number> => {
      const goal = createGoal(
        app,
        by,
        {
          title: `Spend ${n}`,
          description: 'A goal whose budget stops its run.',
          budgets: { tokens: null, cents: 10 },
          maxSpawnDepth: 1,
          coordinatorConfig: 'default',
          approvalMode: 'auto',
        },
        SYSTEM,
      );
      proposeTaskTree(
        app,
        by,
        goal.goalId,
        'plan',
        { title: 'Root', description: 'What the run is charged to.' },
        SYSTEM,
      );
      const { run } = reactor.wake({ agentId: agent.agentId, source: 'manual', goalId: goal.goalId, by: 'bench' });
      const ended = await reactor.whenDone(run.runId);
      const ms = stops.get(run.runId);
      if (ms === undefined)
        throw new Error(`run ${run.runId} was not stopped by its budget (${ended.status}: ${ended.reason})`);
      return ms;
    };
    const raw = () =>
      new Promise<number>((resolve, reject) => {
        const child = spawn('/bin/sh', ['-c', LOOP], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
        child.stdin.end('');
        child.stdout.once('data', () => {
          setTimeout(() => {
            const t0 = performance.now();
            process.kill(-child.pid!, 'SIGTERM');
            child.once('close', () => resolve(performance.now() - t0));
          }, 100);
        });
        child.once('error', reject);
      });
    await oneRun(0);
    await raw();
    const colony: number[] = [];
    const base: number[] = [];
    for (let i = 1; i <= o.runs; i++) {
      colony.push(await oneRun(i));
      base.push(await raw());
    }
    return { ...figure(median(colony), 'ms', median(base)), data: `${o.runs} runs stopped at a 10-cent goal budget` };
  } finally {
    await reactor.idle();
    runtime.stop();
    app.engine.close();
  }
}
