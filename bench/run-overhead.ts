import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { configureBreakers } from '../src/actions/breakers.js';
import { configureRuntime, configureSandbox } from '../src/actions/runs/agent-controls.js';
import { createOwner, registerAgent } from '../src/actions/principals.js';
import { openApp } from '../src/app.js';
import { startRuntime } from '../src/runtime/index.js';
import { hostSupport } from '../src/runtime/sandbox.js';
import { figure, median, type Figure } from './util.js';

/**
 * run_overhead_ms: what Colony adds to a run of `true` — from the wake-up to RunFinished committed:
 * the gates and RunQueued, RunStarted with the prompt, the clean environment, the secrets lookup, the
 * process, its end recorded (durability FULL) — for an agent that runs unconfined. Value =
 * median(wake → RunFinished) − median(raw spawn); baseline = the raw spawn alone (`/bin/sh -c true`
 * with the same stdio, waited for). Target < 50 ms.
 * run_sandbox_overhead_ms: what confinement adds — the same run of an agent in its sandbox
 * (bubblewrap, network allow with its sockets and socat listeners, prlimit, a cgroup where possible)
 * minus the unconfined run, measured in the same rounds; baseline = the unconfined run. Target ≤ 50 ms.
 * The three kinds alternate by round.
 */
export async function benchRunOverhead(
  dir: string,
  o: { runs: number; rounds: number },
): Promise<{ plain: Figure; sandbox: Figure | null }> {
  const data = join(dir, 'run-overhead');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data });
  const owner = createOwner(app, 'bench-owner', { actor: 'system' });
  const agent = registerAgent(
    app,
    {
      name: 'truthful',
      ownerId: owner.userId,
      model: 'none',
      systemPrompt: 'You run true and exit.',
      toolScope: ['whoami'],
      tier: 'supervised',
      command: 'true',
      parentId: null,
      spawnDepth: 0,
    },
    { actor: 'system' },
  );
  configureRuntime(app, owner.userId, agent.agentId, { cooldownSec: 0, dailyRunBudget: 1_000_000 }, 'bench', {
    actor: 'system',
  });
  configureSandbox(app, owner.userId, agent.agentId, { sandbox: 'off' }, 'bench', { actor: 'system' });
  const boxed = registerAgent(
    app,
    {
      name: 'boxed',
      ownerId: owner.userId,
      model: 'none',
      systemPrompt: 'You run true in your sandbox.',
      toolScope: ['whoami'],
      tier: 'supervised',
      command: 'true',
      parentId: null,
      spawnDepth: 0,
    },
    { actor: 'system' },
  );
  configureRuntime(app, owner.userId, boxed.agentId, { cooldownSec: 0, dailyRunBudget: 1_000_000 }, 'bench', {
    actor: 'system',
  });
  // Runs of `true` make no progress by design: the no-progress breaker would pause both agents after five.
  for (const a of [agent, boxed])
    configureBreakers(app, owner.userId, a.agentId, { maxRunsWithoutProgress: 0 }, { actor: 'system' });
  const canBox = hostSupport().ok;
  // No agent here calls back, so the MCP URL is never dialled (the sandbox's readiness probe reaches its socket only).
  const runtime = startRuntime(app, { mcpUrl: 'http://127.0.0.1:9/mcp', pollMs: 1000, sandbox: 'on' });
  const reactor = runtime.reactor!;
  try {
    const oneRun = async (agentId = agent.agentId) => {
      const t0 = performance.now();
      const { kind, run } = reactor.wake({ agentId, source: 'manual', by: 'bench' });
      if (kind === 'refused') throw new Error(`run ${run.runId} refused: ${run.reason ?? ''}`);
      const end = await firstValueFrom(
        app.engine.bus.events$.pipe(
          filter(
            (e) =>
              (e.type === 'RunFinished' || e.type === 'RunFailed') && (e.data as { runId: number }).runId === run.runId,
          ),
        ),
      );
      if (end.type === 'RunFailed')
        throw new Error(`run ${run.runId} failed: ${(end.data as { reason: string }).reason}`);
      return performance.now() - t0;
    };
    const rawSpawn = () =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        const child = spawn('/bin/sh', ['-c', 'true'], {
          cwd: data,
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
          env: { PATH: process.env.PATH },
        });
        child.stdin.on('error', () => undefined);
        child.stdin.end('prompt');
        child.once('error', reject);
        child.once('close', () => resolve(performance.now() - t0));
      });
    for (let i = 0; i < 5; i++) {
      await oneRun();
      await rawSpawn();
      if (canBox) await oneRun(boxed.agentId);
    }
    const colony: number[] = [];
    const raw: number[] = [];
    const confined: number[] = [];
    for (let r = 0; r < o.rounds; r++) {
      for (let i = 0; i < o.runs; i++) raw.push(await rawSpawn());
      for (let i = 0; i < o.runs; i++) colony.push(await oneRun());
      if (canBox) for (let i = 0; i < o.runs; i++) confined.push(await oneRun(boxed.agentId));
    }
    const base = median(raw);
    const plain = median(colony);
    const plainFigure = {
      ...figure(Math.max(0, plain - base), 'ms', base),
      data: `${o.runs * o.rounds} runs of true, FULL`,
    };
    const sandbox = canBox
      ? {
          ...figure(Math.max(0, median(confined) - plain), 'ms', plain),
          data: `${o.runs * o.rounds} confined runs (network allow)`,
        }
      : null;
    return { plain: plainFigure, sandbox };
  } finally {
    await reactor.idle();
    runtime.stop();
    app.engine.close();
  }
}
