import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { watchCall } from '../src/actions/breakers/failures.js';
import { BREAKER_ENV } from '../src/actions/breakers/settings.js';
import { sendDirect } from '../src/actions/channels.js';
import { configureRuntime } from '../src/actions/runs/agent-controls.js';
import { finishRun, requestRun, startQueuedRun } from '../src/actions/runs.js';
import { updateAgent } from '../src/actions/agents.js';
import { openApp } from '../src/app.js';
import { openBreakersOf } from '../src/projections/breaker-queries.js';
import { createTeam, seedGoal, workTask, type Team } from './goal-data.js';
import { figure, median, seconds, type Figure } from './util.js';

/**
 * breakers_commands_per_s: what the loop breakers cost per command — commands/s of a representative mix
 * with the breakers on (the documented defaults) against the same mix with every threshold 0 (off), in
 * the same process, on the same data dir (NORMAL durability, so the CPU cost is not hidden under fsyncs),
 * in blocks of 25 steps alternating on/off (ABBA) so drift and the growing log hit both alike; the
 * medians of the blocks' rates count. Target: no measurable change.
 *
 * One step of the mix, 7 commands, as agents make them: a run (queued through the gates — the `breaker`
 * gate's read —, started, a message by the agent while it runs, finished — the no-progress check), and a
 * task claimed, charged and handed in by another agent; beside them three tool calls fed to the
 * repeated-failure watch as the MCP pipeline feeds it (two failing the same way, one succeeding, so it
 * never trips). The breakers projection (a run's progress, counted from the log) applies in both modes:
 * it is the log's, like every projection; what the thresholds switch is every detector's work.
 */
const COMMANDS_PER_STEP = 7;
const BLOCK = 25;

export async function benchBreakers(dir: string, o: { steps: number; rounds: number }): Promise<Figure> {
  const data = join(dir, 'breakers');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data, durability: 'normal' });
  const saved = Object.fromEntries(Object.values(BREAKER_ENV).map((k) => [k, process.env[k]]));
  try {
    const team = createTeam(app, 2, ['whoami', 'claim_task', 'complete_task', 'report_usage', 'send_message']);
    const runner = team.agents[0]!;
    updateAgent(app, team.owner.tenant, runner.agentId, { command: 'true' }, { actor: 'user:owner' });
    const limits = { cooldownSec: 0, dailyRunBudget: 1_000_000_000, dailyTokenBudget: 1_000_000_000 };
    configureRuntime(app, team.owner.tenant, runner.agentId, limits, 'bench', { actor: 'system' });
    const goals: { goalId: number; leaves: number[] }[] = [];
    const leaves = (): number[] => goals.flatMap((g) => g.leaves);
    while (leaves().length < o.steps * o.rounds * 2 + 50) goals.push(seedGoal(app, team.owner, goals.length + 1));
    const queue = leaves();
    const step = mixStep(app, team, goals[0]!.goalId, () => queue.shift()!);
    for (let i = 0; i < 50; i++) step(i); // warm-up, breakers on
    const rates = { on: [] as number[], off: [] as number[] };
    // Short blocks, ABBA: the machine's noise and the growing log hit both modes alike; medians of many blocks count.
    for (let b = 0; b < (o.steps / BLOCK) * o.rounds * 2; b++) {
      const mode = (['on', 'off', 'off', 'on'] as const)[b % 4]!;
      for (const k of Object.values(BREAKER_ENV)) {
        if (mode === 'off') process.env[k] = '0';
        else delete process.env[k];
      }
      rates[mode].push(
        (BLOCK * COMMANDS_PER_STEP) /
          seconds(() => {
            for (let i = 0; i < BLOCK; i++) step(i);
          }),
      );
    }
    // A trip would refuse the runner's next runs and change the mix between the modes: the figure would lie.
    const tripped = team.agents.flatMap((a) => openBreakersOf(app.engine.db, a.agentId));
    if (tripped.length > 0) throw new Error(`breakers bench: a breaker tripped (${tripped[0]!.breaker})`);
    return figure(median(rates.on), 'commands/s', median(rates.off));
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    app.engine.close();
  }
}

function mixStep(app: ReturnType<typeof openApp>, team: Team, goalId: number, nextLeaf: () => number) {
  const [runner, worker] = team.agents as [Team['agents'][0], Team['agents'][0]];
  const as = (a: Team['agents'][0]) => ({ actor: `agent:${a.speaker.name}` });
  const at = new Date().toISOString();
  return (i: number): void => {
    const { run } = requestRun(app, { agentId: runner.agentId, source: 'manual', goalId, by: team.owner.key });
    startQueuedRun(app, run.runId);
    const body = `step ${i}: looked at the build`;
    sendDirect(
      app,
      runner.speaker,
      'owner',
      { body, subject: null, priority: 5, metadata: null, replyTo: null },
      as(runner),
    );
    finishRun(app, run.runId, {
      status: 'succeeded',
      exitCode: 0,
      signal: null,
      durationMs: 5,
      tokensIn: 100,
      tokensOut: 40,
      costCents: 1,
      outputTail: '',
      agentText: null,
    });
    workTask(app, worker.speaker, nextLeaf(), i);
    const call = { tool: 'claim_task', argsDigest: `d${i % 50}`, at, goalArg: goalId };
    watchCall(app, worker.agentId, { ...call, outcome: 'error', errorCode: 'ErrTaskNotFound' });
    watchCall(app, worker.agentId, { ...call, outcome: 'error', errorCode: 'ErrTaskNotFound' });
    watchCall(app, worker.agentId, { ...call, outcome: 'success', errorCode: null });
  };
}
