import type { Command } from 'commander';
import type { RuntimeOverrides } from '../events/runs.js';
import type { AgentRow, UserRow } from '../projections/principals.js';
import type { App } from '../app.js';
import { withOwner } from './owner.js';
import { addSandboxOptions, parseSandbox, type SandboxOptions } from './agent-sandbox.js';
import { action, CliError, printJson } from './shared.js';

// What an action needs is imported when it runs, so that defining these commands (and --help) stays cheap.
const agentRuntime = () => import('../actions/runs/agent-controls.js');
const runQueries = () => import('../projections/run-queries.js');

/**
 * `colony agents wake|stop|start|runtime`: the owner's controls over running agents. `wake` queues a
 * manual run (the serving process starts it within a poll; `colony runs show ID` follows it).
 */
export function registerAgentRuntime(agents: Command): void {
  agents
    .command('wake <name>')
    .description('queue a manual run of the agent (colony serve starts it); --task gives it a task context')
    .option('--task <id>', 'the task the run is about')
    .option('--prompt <text>', 'what to tell it (added to its wake prompt)')
    .option('--json', 'print the run as JSON')
    .action(
      action((name: string, opts: { task?: string; prompt?: string; json?: boolean }, cmd: Command) => {
        const taskId = opts.task === undefined ? null : positiveInt(opts.task, '--task');
        return withAgent(cmd, name, async (app, owner, agent) => {
          const { requestRun } = await import('../actions/runs.js');
          const { kind, run } = requestRun(
            app,
            {
              agentId: agent.agentId,
              source: 'manual',
              taskId,
              prompt: opts.prompt ?? null,
              by: `user-${owner.userId}`,
            },
            { actor: `user:${owner.name}` },
          );
          if (opts.json)
            return printJson({
              run_id: run.runId,
              outcome: kind,
              status: run.status,
              gate: run.gate,
              reason: run.reason,
              session_id: run.sessionId,
            });
          if (kind === 'refused') throw new CliError(`run ${run.runId} refused by the ${run.gate} gate: ${run.reason}`);
          process.stdout.write(
            kind === 'merged'
              ? `Merged into queued run ${run.runId} of ${name}\n`
              : `Queued run ${run.runId} of ${name}${run.queueReason ? ` (waits: ${run.queueReason})` : ''}\n`,
          );
        });
      }),
    );
  agents
    .command('stop <name>')
    .description(
      'stop an agent: its running process gets SIGTERM, its probes expire, and it is not woken until started again',
    )
    .option('--reason <text>', 'why', 'stopped by the owner')
    .action(
      action((name: string, opts: { reason: string }, cmd: Command) =>
        withAgent(cmd, name, async (app, owner, agent) => {
          const [{ stopAgent }, { runtimeOf }] = await Promise.all([agentRuntime(), runQueries()]);
          const was = runtimeOf(app.engine.db, agent.agentId).stopped;
          stopAgent(app, owner.userId, agent.agentId, `user-${owner.userId}`, opts.reason, {
            actor: `user:${owner.name}`,
          });
          process.stdout.write(was ? `${name} was already stopped\n` : `Stopped ${name}\n`);
        }),
      ),
    );
  agents
    .command('start <name>')
    .description('let a stopped agent be woken again')
    .action(
      action((name: string, _opts: unknown, cmd: Command) =>
        withAgent(cmd, name, async (app, owner, agent) => {
          const [{ startAgent }, { runtimeOf }] = await Promise.all([agentRuntime(), runQueries()]);
          const was = runtimeOf(app.engine.db, agent.agentId).stopped;
          startAgent(app, owner.userId, agent.agentId, `user-${owner.userId}`, { actor: `user:${owner.name}` });
          process.stdout.write(was ? `Started ${name}\n` : `${name} was not stopped\n`);
        }),
      ),
    );
  addSandboxOptions(
    agents
      .command('runtime <name>')
      .description(
        'show or change how an agent runs: timeout, cooldown, daily run budget, max trigger depth, its project, and how its processes are confined ("default" resets one)',
      )
      .option('--timeout-sec <n>', 'a run is stopped after this many seconds (SIGTERM, SIGKILL 15 s later)')
      .option(
        '--cooldown-sec <n>',
        'at least this long between two runs; wake-ups in between merge into one queued run',
      )
      .option('--daily-runs <n>', 'at most this many runs per UTC day')
      .option('--max-trigger-depth <n>', "a chain of runs woken by each other's messages stops at this depth")
      .option(
        '--project <name>',
        'the project it works in: its runs start in the project\'s directory ("none" clears it)',
      )
      .option('--json', 'print the effective settings as JSON'),
  ).action(
    action((name: string, opts: RuntimeOptions & SandboxOptions, cmd: Command) => {
      const changes = parseRuntime(opts);
      const confinement = parseSandbox(opts);
      return withAgent(cmd, name, async (app, owner, agent) => {
        const [
          { configureRuntime, configureSandbox, setAgentProject },
          { runtimeSettings },
          { runtimeOf },
          { getProject, getProjectByName },
          { effectiveSandbox },
        ] = await Promise.all([
          agentRuntime(),
          import('../actions/runs/settings.js'),
          runQueries(),
          import('../projections/projects.js'),
          import('../runtime/confine.js'),
        ]);
        const by = { actor: `user:${owner.name}` };
        if (
          opts.project !== undefined &&
          opts.project !== 'none' &&
          !getProjectByName(app.engine.db, owner.userId, opts.project)
        ) {
          throw new CliError(`project ${opts.project} not found`);
        }
        if (Object.keys(changes).length > 0)
          configureRuntime(app, owner.userId, agent.agentId, changes, `user-${owner.userId}`, by);
        if (Object.keys(confinement).length > 0)
          configureSandbox(app, owner.userId, agent.agentId, confinement, `user-${owner.userId}`, by);
        if (opts.project !== undefined)
          setAgentProject(
            app,
            owner.userId,
            agent.agentId,
            opts.project === 'none' ? null : opts.project,
            `user-${owner.userId}`,
            by,
          );
        const s = runtimeSettings(app.engine.db, agent.agentId);
        const rt = runtimeOf(app.engine.db, agent.agentId);
        const project = rt.projectId === null ? null : (getProject(app.engine.db, rt.projectId)?.name ?? null);
        const box = effectiveSandbox(rt.sandbox);
        if (opts.json) {
          return printJson({
            name,
            status: rt.status,
            project,
            timeout_sec: s.timeoutSec,
            cooldown_sec: s.cooldownSec,
            daily_run_budget: s.dailyRunBudget,
            max_trigger_depth: s.maxTriggerDepth,
            sandbox: box.sandbox,
            network: box.network,
            allow_hosts: box.allowHosts,
            memory_mb: box.limits.memoryMb,
            cpu_sec: box.limits.cpuSec,
            pids: box.limits.pids,
            file_size_mb: box.limits.fileMb,
          });
        }
        process.stdout.write(
          `${name} (${rt.status}${project ? `, project ${project}` : ''}): timeout ${s.timeoutSec}s, cooldown ${s.cooldownSec}s, ${s.dailyRunBudget} runs/day, max trigger depth ${s.maxTriggerDepth}\n`,
        );
        process.stdout.write(
          `  sandbox ${box.sandbox}, network ${box.network}${box.network === 'allow' ? ` (${box.allowHosts.join(', ')})` : ''}, memory ${box.limits.memoryMb} MB, cpu ${box.limits.cpuSec} s, pids ${box.limits.pids}, file size ${box.limits.fileMb} MB\n`,
        );
      });
    }),
  );
}

interface RuntimeOptions {
  timeoutSec?: string;
  cooldownSec?: string;
  dailyRuns?: string;
  maxTriggerDepth?: string;
  project?: string;
  json?: boolean;
}

function parseRuntime(opts: RuntimeOptions): Partial<RuntimeOverrides> {
  const out: Partial<RuntimeOverrides> = {};
  const fields: [keyof RuntimeOverrides, string | undefined, string, number][] = [
    ['timeoutSec', opts.timeoutSec, '--timeout-sec', 1],
    ['cooldownSec', opts.cooldownSec, '--cooldown-sec', 0],
    ['dailyRunBudget', opts.dailyRuns, '--daily-runs', 0],
    ['maxTriggerDepth', opts.maxTriggerDepth, '--max-trigger-depth', 0],
  ];
  for (const [key, raw, flag, min] of fields) {
    if (raw === undefined) continue;
    if (raw === 'default') out[key] = null;
    else if (!/^\d+$/.test(raw) || Number(raw) < min)
      throw new CliError(`${flag} must be an integer ≥ ${min} or "default", not "${raw}"`);
    else out[key] = Number(raw);
  }
  return out;
}

function positiveInt(raw: string, flag: string): number {
  if (!/^[1-9]\d*$/.test(raw)) throw new CliError(`${flag} must be a positive integer, not "${raw}"`);
  return Number(raw);
}

function withAgent<T>(
  cmd: Command,
  name: string,
  fn: (app: App, owner: UserRow, agent: AgentRow) => T | Promise<T>,
): Promise<T> {
  return withOwner(cmd, async (app, owner) => {
    const { getAgentByName } = await import('../projections/principals.js');
    const agent = getAgentByName(app.engine.db, owner.userId, name);
    if (!agent) throw new CliError(`agent ${name} not found`);
    return fn(app, owner, agent);
  });
}
