import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { failRun, recordSessionMessage } from '../actions/runs.js';
import { writeMcpConfig, type McpConfigFile } from './mcp-config.js';
import type { App } from '../app.js';
import { log } from '../log.js';
import { getAgent, type AgentRow } from '../projections/principal-queries.js';
import { agentToken, colonyEnv, secretsFor } from './run-env.js';
import { getRun, runtimeOf, type RunRow } from '../projections/run-queries.js';
import { sessionMessages } from '../projections/session-message-queries.js';
import { launch, PendingProcess } from './harness.js';
import type { Confiner } from './confine.js';
import { agentWorkDir } from './work-dirs.js';
import { launchRun, timeOutRun } from '../actions/runs/launch.js';
import { adapterFor } from './adapters/index.js';
import { adapterLaunch, type AdapterLaunch } from './adapter-run.js';
import { commandMeter } from './usage.js';
import { recordAttemptEnd } from './attempt-end.js';
import { RunMeter } from './run-meter.js';

const SYSTEM = { actor: 'system' };

/**
 * Starts the process of a run that has just been recorded as started, and records how it ended. The
 * environment is clean — what a shell needs, the secrets in scope (task > agent > user), then Colony's
 * own variables, which win: COLONY_URL, COLONY_TOKEN (the agent's own), COLONY_AGENT, COLONY_RUN_ID,
 * COLONY_SESSION_ID, COLONY_WAKE_SOURCE, COLONY_TRIGGER_DEPTH, COLONY_GOAL_ID, the COLONY_TASK_*
 * context, TRACEPARENT (W3C, the run's trace id) and COLONY_MCP_CONFIG (a ready `.mcp.json` with this
 * server and the agent's token, mcp-config.ts). The working directory is the agent's project's, or
 * its own under the data dir's workspace.
 */
export interface RunnerOptions {
  mcpUrl: string;
  killGraceMs?: number;
  /** SIGTERM → SIGKILL when a budget stops a run (run-meter.ts BUDGET_GRACE_MS). */
  budgetGraceMs?: number;
  /** Told how each process's meter ended (the bench times a budget's stop with it). */
  onMeterEnd?: (runId: number, meter: RunMeter) => void;
  confiner: Confiner;
}

export interface Launched {
  run: RunRow;
  process: PendingProcess | null;
  done: Promise<RunRow>;
}

export function runProcess(app: App, run: RunRow, options: RunnerOptions): Launched {
  const agent = getAgent(app.engine.db, run.agentId)!;
  const token = agentToken(app, agent);
  if (!token) {
    const failed = failRun(
      app,
      run.runId,
      `agent ${agent.name} has no token Colony can start it with; rotate it (colony agents token ${agent.name} --rotate)`,
    );
    return { run: failed, process: null, done: Promise.resolve(failed) };
  }
  const cwd = agentWorkDir(app, agent);
  if (typeof cwd !== 'string') {
    const failed = failRun(app, run.runId, cwd.problem);
    return { run: failed, process: null, done: Promise.resolve(failed) };
  }
  const pending = new PendingProcess();
  const done = confinedRun(app, run, agent, { cwd, token, pending, options }).catch((err: Error) => {
    log.error({ err, runId: run.runId }, 'a run could not be launched');
    return app.engine.db.open ? failRun(app, run.runId, `the run could not be launched: ${err.message}`) : run;
  });
  return { run: getRun(app.engine.db, run.runId)!, process: pending, done };
}

/**
 * Confines the process (confine.ts), records the profile it runs under (RunLaunched), runs it and
 * records its end — with the limit it ran into, if any. Refused confinement fails the run with the reason.
 */
async function confinedRun(
  app: App,
  run: RunRow,
  agent: AgentRow,
  c: { cwd: string; token: string; pending: PendingProcess; options: RunnerOptions },
): Promise<RunRow> {
  const secrets = secretsFor(app, run, agent);
  const home = join(app.dataDir, 'homes', agent.name);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const prompt = sessionMessages(app.engine.db, run.runId).find((m) => m.role === 'user')?.content ?? '';
  const adapter = adapterFor(agent.runtime);
  if (!adapter) return attempt(app, run, agent, { ...c, secrets, home, prompt, cli: null });
  const first = adapterLaunch(app, run, agent, { adapter, prompt, token: c.token, fresh: false, secrets });
  if ('problem' in first) return failRun(app, run.runId, first.problem, SYSTEM, 'not_found');
  const ended = await attempt(app, run, agent, { ...c, secrets, home, prompt, cli: first });
  if (ended.cause !== 'resume_failed' || getRun(app.engine.db, run.runId)?.status !== 'running') return ended;
  // The session it resumed is gone (or refused): the same run goes on in a fresh one, and the transcript says so.
  recordSessionMessage(
    app,
    run.runId,
    'system',
    `${adapter.label} could not resume its last session; this run starts a fresh one.`,
  );
  const fresh = adapterLaunch(app, run, agent, { adapter, prompt, token: c.token, fresh: true, secrets });
  if ('problem' in fresh) return failRun(app, run.runId, fresh.problem, SYSTEM, 'not_found');
  return attempt(app, run, agent, { ...c, secrets, home, prompt, cli: fresh });
}

interface Attempt {
  cwd: string;
  token: string;
  pending: PendingProcess;
  options: RunnerOptions;
  secrets: Record<string, string>;
  home: string;
  prompt: string;
  /** The adapter's launch (null: the agent's command runs as it is). */
  cli: AdapterLaunch | null;
}

/**
 * One process of the run. A resume that failed leaves the run running (cause `resume_failed` on the
 * returned row only) so the caller can go on fresh; every other end is recorded.
 */
async function attempt(app: App, run: RunRow, agent: AgentRow, c: Attempt): Promise<RunRow & { cause: string | null }> {
  const { secrets, home, cli } = c;
  const env = { ...secrets, ...colonyEnv(app, run, agent, c.token, c.options.mcpUrl) };
  // A CLI keeps its login, sessions and config in the agent's own home, also when not confined.
  if (cli) env.HOME = home;
  const confined = await c.options.confiner.prepare({
    role: 'agent',
    label: `run-${run.runId}`,
    command: cli ? cli.command : agent.command!,
    readOnly: cli?.readOnly,
    cwd: c.cwd,
    cwdWritable: true,
    home,
    env,
    overrides: runtimeOf(app.engine.db, agent.agentId).sandbox,
  });
  if ('refused' in confined) return { ...failRun(app, run.runId, confined.refused), cause: null };
  let files: { remove(): void } | null = null;
  try {
    let stdin: string;
    ({ files, stdin } = runFiles(c, confined.env));
    if (!app.engine.db.open || getRun(app.engine.db, run.runId)?.status !== 'running')
      return { ...(getRun(app.engine.db, run.runId) ?? run), cause: null };
    launchRun(app, run.runId, confined.profile);
    const usage = cli ? cli.adapter.meter({ resumed: cli.resumed }) : commandMeter();
    const meter = new RunMeter(app, getRun(app.engine.db, run.runId)!, usage, agent.model, c.options.budgetGraceMs);
    const process = launch({
      command: cli ? cli.adapter.runtime : agent.command!,
      file: confined.file,
      args: confined.args,
      cwd: c.cwd,
      env: confined.env,
      fds: confined.fds,
      stdin,
      timeoutSec: run.timeoutSec ?? 900,
      secrets: [...Object.values(secrets), c.token],
      killGraceMs: c.options.killGraceMs,
      watch: meter.watchWith(confined.watch),
      onStdout: (chunk) => meter.chunk(chunk),
      onTimeout: () => record(() => timeOutRun(app, run.runId, run.timeoutSec ?? 900)),
    });
    c.pending.attach(process);
    const r = await process.done;
    meter.end();
    c.options.onMeterEnd?.(run.runId, meter);
    return recordAttemptEnd(app, run, agent, c, {
      r,
      limit: meter.stopped ? 'budget' : confined.limitHit(r),
      stop: meter.outcome(),
    });
  } finally {
    files?.remove();
    confined.release();
  }
}

/** What the process reads at start: the CLI's prompt and files (adapters), or the MCP config of a plain command. */
function runFiles(c: Attempt, env: NodeJS.ProcessEnv): { files: { remove(): void } | null; stdin: string } {
  if (c.cli) {
    const prepared = c.cli.prepare(env, c.home);
    return { files: prepared, stdin: prepared.stdin };
  }
  const files = writeMcpConfig(c.home, env, c.token);
  if (files) env.COLONY_MCP_CONFIG = (files as McpConfigFile).path;
  return { files, stdin: c.prompt };
}

function record(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.warn({ err }, 'run event not recorded');
  }
}
