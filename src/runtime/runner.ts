import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { failRun, finishRun } from '../actions/runs.js';
import { buildSecretEnv } from '../actions/secrets/env.js';
import { writeMcpConfig, type McpConfigFile } from './mcp-config.js';
import type { App } from '../app.js';
import { log } from '../log.js';
import { unseal } from '../masterkey.js';
import { getGoal } from '../projections/goal-queries.js';
import { getTask } from '../projections/task-queries.js';
import { getAgent, sealedTokenOf, type AgentRow } from '../projections/principal-queries.js';
import { getRun, runtimeOf, sessionMessages, type RunRow } from '../projections/run-queries.js';
import { launch, PendingProcess, type ProcessResult } from './harness.js';
import type { LimitKind } from '../events/sandbox.js';
import type { Confiner } from './confine.js';
import { agentWorkDir } from './work-dirs.js';
import { parseFinalUsage } from './usage.js';
import { launchRun, timeOutRun } from '../actions/runs/launch.js';

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
  const confined = await c.options.confiner.prepare({
    role: 'agent',
    label: `run-${run.runId}`,
    command: agent.command!,
    cwd: c.cwd,
    cwdWritable: true,
    home,
    env: { ...secrets, ...colonyEnv(app, run, agent, c.token, c.options.mcpUrl) },
    overrides: runtimeOf(app.engine.db, agent.agentId).sandbox,
  });
  if ('refused' in confined) return failRun(app, run.runId, confined.refused);
  let mcpConfig: McpConfigFile | null = null;
  try {
    mcpConfig = writeMcpConfig(home, confined.env, c.token);
    if (mcpConfig) confined.env.COLONY_MCP_CONFIG = mcpConfig.path;
    if (!app.engine.db.open || getRun(app.engine.db, run.runId)?.status !== 'running')
      return getRun(app.engine.db, run.runId) ?? run;
    launchRun(app, run.runId, confined.profile);
    const stdin = sessionMessages(app.engine.db, run.runId).find((m) => m.role === 'user')?.content ?? '';
    const process = launch({
      command: agent.command!,
      file: confined.file,
      args: confined.args,
      cwd: c.cwd,
      env: confined.env,
      fds: confined.fds,
      stdin,
      timeoutSec: run.timeoutSec ?? 900,
      secrets: [...Object.values(secrets), c.token],
      killGraceMs: c.options.killGraceMs,
      watch: confined.watch,
      onTimeout: () => record(() => timeOutRun(app, run.runId, run.timeoutSec ?? 900)),
    });
    c.pending.attach(process);
    const r = await process.done;
    return recordEnd(app, run, r, confined.limitHit(r));
  } finally {
    mcpConfig?.remove();
    confined.release();
  }
}

/** The process's end as the run's: finished (with its usage and the limit it ran into) or failed to start. */
function recordEnd(app: App, run: RunRow, r: ProcessResult, limit: LimitKind | null): RunRow {
  // Colony stopped (or the run was failed) while the process ran: its end is no longer the run's.
  if (!app.engine.db.open) return run;
  const now = getRun(app.engine.db, run.runId)!;
  if (now.status !== 'running') return now;
  if (r.spawnError) return failRun(app, run.runId, `the backend command could not start: ${r.spawnError}`);
  const usage = parseFinalUsage(r.stdout);
  const text = usage?.result ?? r.stdout.trim();
  return finishRun(app, run.runId, {
    status: r.timedOut ? 'timed_out' : r.exitCode === 0 ? 'succeeded' : 'failed',
    exitCode: r.exitCode,
    signal: r.signal,
    durationMs: r.durationMs,
    tokensIn: usage?.tokensIn ?? 0,
    tokensOut: usage?.tokensOut ?? 0,
    costCents: usage?.costCents ?? 0,
    outputTail: r.tail,
    agentText: text || null,
    limit,
  });
}

function record(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.warn({ err }, 'run event not recorded');
  }
}

function agentToken(app: App, agent: AgentRow): string | null {
  const sealed = sealedTokenOf(app.engine.db, agent.agentId);
  return sealed ? unseal(app.key, sealed) : null;
}

function secretsFor(app: App, run: RunRow, agent: AgentRow): Record<string, string> {
  try {
    return buildSecretEnv(app, {
      ownerId: agent.ownerId,
      agentId: agent.agentId,
      taskId: run.taskId,
      purpose: 'agent_run',
    });
  } catch (err) {
    log.warn({ reason: (err as Error).message, runId: run.runId }, 'secrets were not injected into the run');
    return {};
  }
}

function colonyEnv(app: App, run: RunRow, agent: AgentRow, token: string, mcpUrl: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: process.env.LANG ?? 'C.UTF-8',
    COLONY_URL: mcpUrl,
    COLONY_TOKEN: token,
    COLONY_AGENT: agent.name,
    COLONY_AGENT_ID: String(agent.agentId),
    COLONY_RUN_ID: String(run.runId),
    COLONY_SESSION_ID: run.sessionId ?? '',
    COLONY_WAKE_SOURCE: run.wakes[0]?.source ?? 'manual',
    COLONY_TRIGGER_DEPTH: String(run.depth),
    TRACEPARENT: `00-${run.traceId ?? randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`,
  };
  if (run.goalId !== null) {
    env.COLONY_GOAL_ID = String(run.goalId);
    env.COLONY_GOAL_TITLE = getGoal(app.engine.db, run.goalId)?.title ?? '';
  }
  const task = run.taskId === null ? null : getTask(app.engine.db, run.taskId);
  if (task) {
    Object.assign(env, {
      COLONY_TASK_ID: String(task.taskId),
      COLONY_TASK_TITLE: task.title,
      COLONY_TASK_DESCRIPTION: task.description,
      COLONY_TASK_ACCEPTANCE_CRITERIA: task.acceptanceCriteria,
      COLONY_TASK_ANCESTRY: JSON.stringify(task.ancestry),
      COLONY_TASK_BILLING_CODE: task.billingCode,
      // A project task's plan (task_create's model and effort), only when it names one: a backend picks its model from it.
      ...(task.model ? { COLONY_TASK_MODEL: task.model } : {}),
      ...(task.effort ? { COLONY_TASK_EFFORT: task.effort } : {}),
    });
  }
  return env;
}
