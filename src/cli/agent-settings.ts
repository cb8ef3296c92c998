import type { Command } from 'commander';
import type { App } from '../app.js';
import type { RuntimeOverrides } from '../events/runs.js';
import type { SandboxOverrides } from '../events/sandbox.js';
import type { AgentRow, UserRow } from '../projections/principal-queries.js';
import { addSandboxOptions, parseSandbox, type SandboxOptions } from './agent-sandbox.js';
import { withAgent } from './owner.js';
import { action, CliError, printJson } from './shared.js';

/**
 * `colony agents runtime NAME`: shows, or changes then shows, how an agent runs — timeout, cooldown,
 * daily run budget, max trigger depth, its project and its confinement (agent-sandbox.ts). "default"
 * resets a setting to the team's.
 */
export function registerRuntimeSettings(agents: Command): void {
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
      .option(
        '--daily-tokens <n>',
        'at most this many tokens per UTC day, across goals (a run is stopped when it reaches it)',
      )
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
        await applySettings(app, owner, agent, { changes, confinement, project: opts.project });
        await showSettings(app, name, agent, opts.json === true);
      });
    }),
  );
}

interface RuntimeOptions {
  timeoutSec?: string;
  cooldownSec?: string;
  dailyRuns?: string;
  dailyTokens?: string;
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
    ['dailyTokenBudget', opts.dailyTokens, '--daily-tokens', 0],
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

/** Each kind of change is its own command, run only when the options ask for it; an unknown project changes nothing. */
async function applySettings(
  app: App,
  owner: UserRow,
  agent: AgentRow,
  asked: { changes: Partial<RuntimeOverrides>; confinement: Partial<SandboxOverrides>; project: string | undefined },
): Promise<void> {
  const [{ configureRuntime, configureSandbox, setAgentProject }, { getProjectByName }] = await Promise.all([
    import('../actions/runs/agent-controls.js'),
    import('../projections/projects.js'),
  ]);
  const { changes, confinement, project } = asked;
  const by = { actor: `user:${owner.name}` };
  const principal = `user-${owner.userId}`;
  if (project !== undefined && project !== 'none' && !getProjectByName(app.engine.db, owner.userId, project))
    throw new CliError(`project ${project} not found`);
  if (Object.keys(changes).length > 0) configureRuntime(app, owner.userId, agent.agentId, changes, principal, by);
  if (Object.keys(confinement).length > 0)
    configureSandbox(app, owner.userId, agent.agentId, confinement, principal, by);
  if (project !== undefined)
    setAgentProject(app, owner.userId, agent.agentId, project === 'none' ? null : project, principal, by);
}

/** The settings in effect now, the team's defaults filled in. */
async function showSettings(app: App, name: string, agent: AgentRow, json: boolean): Promise<void> {
  const [{ runtimeSettings }, { runtimeOf }, { getProject }, { effectiveSandbox }, { sandboxView }] = await Promise.all(
    [
      import('../actions/runs/settings.js'),
      import('../projections/run-queries.js'),
      import('../projections/projects.js'),
      import('../runtime/confine.js'),
      import('../runtime/sandbox-view.js'),
    ],
  );
  const s = runtimeSettings(app.engine.db, agent.agentId);
  const rt = runtimeOf(app.engine.db, agent.agentId);
  const project = rt.projectId === null ? null : (getProject(app.engine.db, rt.projectId)?.name ?? null);
  const box = effectiveSandbox(rt.sandbox);
  if (json) {
    return printJson({
      name,
      status: rt.status,
      project,
      timeout_sec: s.timeoutSec,
      cooldown_sec: s.cooldownSec,
      daily_run_budget: s.dailyRunBudget,
      daily_token_budget: s.dailyTokenBudget,
      max_trigger_depth: s.maxTriggerDepth,
      ...sandboxView(rt.sandbox),
    });
  }
  process.stdout.write(
    `${name} (${rt.status}${project ? `, project ${project}` : ''}): timeout ${s.timeoutSec}s, cooldown ${s.cooldownSec}s, ${s.dailyRunBudget} runs/day, ${s.dailyTokenBudget} tokens/day, max trigger depth ${s.maxTriggerDepth}\n`,
  );
  process.stdout.write(
    `  sandbox ${box.sandbox}, network ${box.network}${box.network === 'allow' ? ` (${box.allowHosts.join(', ')})` : ''}, memory ${box.limits.memoryMb} MB, cpu ${box.limits.cpuSec} s, pids ${box.limits.pids}, file size ${box.limits.fileMb} MB, disk ${box.limits.diskMb} MB\n`,
  );
}
