import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { sandboxIdentity } from '../sandbox-user.js';
import { existsNoFollow, makeDir, writeText } from '../beneath.js';
import { dirname, join } from 'node:path';
import { finishRun } from '../actions/runs.js';
import type { App } from '../app.js';
import type { BillingLane } from '../events/runs.js';
import type { LimitKind } from '../events/sandbox.js';
import { getGoal, goalTotals } from '../projections/goal-queries.js';
import type { AgentRow } from '../projections/principal-queries.js';
import { getRun, type RunRow } from '../projections/run-queries.js';
import { cliSessionTokens, lastCliSession } from '../projections/cli-session-queries.js';
import { resolveBinary } from './adapters/binary.js';
import { shellLine } from './adapters/shell.js';
import type { LaunchPlan, RunReport, RuntimeAdapter } from './adapters/types.js';
import type { ProcessResult } from './harness.js';
import { writeExclusive } from './mcp-config.js';
import { SANDBOX_HOME } from './sandbox.js';
import { priceOf } from './rate-card.js';
import { stoppedBy, type MeterEnd } from './run-meter.js';

/**
 * One run of an agent CLI through its adapter (adapters/): the binary found and what the sandbox must
 * mount for it, the launch line made once the environment inside is known, the run's files written into
 * the agent's home for the run's life, and the run's end recorded from the CLI's own result — failed
 * with the reason when the CLI says so, whatever its exit code.
 */
export interface AdapterLaunch {
  adapter: RuntimeAdapter;
  /** For the confiner: the line, made from the environment inside. */
  command: (inside: NodeJS.ProcessEnv) => string;
  readOnly: string[];
  /** Whether this launch resumes a CLI session. */
  resumed: boolean;
  /** After the confiner: writes the run's files, sets the adapter's variables; answers the stdin and a remover. */
  prepare(env: NodeJS.ProcessEnv, hostHome: string): { stdin: string; remove: () => void };
}

export function adapterLaunch(
  app: App,
  run: RunRow,
  agent: AgentRow,
  c: { adapter: RuntimeAdapter; prompt: string; token: string; fresh: boolean; secrets: Record<string, string> },
): AdapterLaunch | { problem: string } {
  const bin = resolveBinary(c.adapter.needs);
  if ('problem' in bin) return { problem: `${c.adapter.label}: ${bin.problem}` };
  let fixed: string | null = null;
  try {
    fixed = c.adapter.fixedConfig ? fixedConfigDir(app.dataDir, c.adapter) : null;
  } catch (e) {
    return { problem: `${c.adapter.label}: its config directory: ${(e as Error).message}` };
  }
  const resume = c.fresh ? null : lastCliSession(app.engine.db, agent.agentId, run, c.adapter.runtime);
  let plan: LaunchPlan | null = null;
  return {
    adapter: c.adapter,
    readOnly: [...bin.mounts, ...(fixed ? [fixed] : [])],
    resumed: resume !== null,
    command: (inside) => {
      plan = c.adapter.launch({
        binary: bin.path,
        model: c.adapter.checkModel(agent.model) === null ? agent.model : null,
        toolScope: agent.toolScope,
        prompt: c.prompt,
        budgetUsd: budgetUsd(app, run),
        resume,
        mcpUrl: inside.COLONY_URL ?? '',
        token: c.token,
        baseUrls: Object.fromEntries(Object.entries(c.secrets).filter(([k]) => k.endsWith('_BASE_URL'))),
      });
      return shellLine(bin.path, plan.args);
    },
    prepare(env, hostHome) {
      const p = plan!;
      const written: string[] = [];
      for (const [k, v] of Object.entries(p.env))
        if (!k.startsWith('COLONY_')) env[k] = v.replace('$HOME', env.HOME ?? '');
      // The agent's home is its own to write: made beneath it with no symlink followed, given to the sandbox uid
      // on the descriptor; one there already (the agent's own) is left as it is, a link refused.
      for (const d of p.homeDirs ?? []) makeDir(join(hostHome, d), 0o700, sandboxIdentity());
      for (const e of c.adapter.fixedConfig ?? []) env[e.env] = fixed!;
      for (const f of p.files) {
        const name = `.colony-run-${randomBytes(12).toString('hex')}.json`;
        writeExclusive(join(hostHome, name), f.content);
        written.push(join(hostHome, name));
        env[f.env] = env.HOME === SANDBOX_HOME ? join(SANDBOX_HOME, name) : join(hostHome, name);
      }
      return { stdin: p.stdin, remove: () => written.forEach((w) => rmSync(w, { force: true })) };
    },
  };
}

/**
 * The read-only config directory of an adapter (its `fixedConfig` files inside), in Colony's data dir:
 * made by Colony, rewritten as it says at each launch (no symlink on the way followed), mounted read-only
 * at the same path.
 */
function fixedConfigDir(dataDir: string, adapter: RuntimeAdapter): string {
  const root = join(dataDir, 'runtimes', `${adapter.runtime}-config`);
  const files = Object.assign({}, ...(adapter.fixedConfig ?? []).map((f) => f.files)) as Record<string, string>;
  const dirs = new Set([join(dataDir, 'runtimes'), root]);
  for (const f of Object.keys(files))
    for (let d = dirname(join(root, f)); d.startsWith(root); d = dirname(d)) dirs.add(d);
  for (const dir of [...dirs].sort((a, b) => a.length - b.length)) makeDir(dir, 0o755);
  for (const [f, content] of Object.entries(files)) {
    const path = join(root, f);
    writeText(path, content, !existsNoFollow(path), 0o644);
  }
  return root;
}

/** The lane the credentials handed to the run imply: an API key secret is metered, a CLI login in its home is a plan. */
export function credentialLane(
  adapter: RuntimeAdapter,
  secrets: Record<string, string>,
  hostHome: string,
): BillingLane {
  if (adapter.needs.keySecrets.some((k) => secrets[k])) return 'api';
  if (adapter.needs.loginFiles.some((f) => existsSync(join(hostHome, f)))) return 'subscription';
  return 'unknown';
}

/** The process's end as the run's, read by the adapter. */
export function recordAdapterEnd(
  app: App,
  run: RunRow,
  r: ProcessResult,
  limit: LimitKind | null,
  c: { adapter: RuntimeAdapter; model: string; report: RunReport; stop: MeterEnd },
): RunRow {
  const { adapter } = c;
  const report = perProcess(app, run, c.report);
  if (!app.engine.db.open) return run;
  const now = getRun(app.engine.db, run.runId)!;
  if (now.status !== 'running') return now;
  const cost = report.costUsd !== null ? report.costUsd : priceOf(app, run.ownerId, c.model, report);
  const failure = r.timedOut ? null : report.failure;
  return finishRun(app, run.runId, {
    status: r.timedOut ? 'timed_out' : failure || r.exitCode !== 0 ? 'failed' : 'succeeded',
    exitCode: r.exitCode,
    signal: r.signal,
    durationMs: r.durationMs,
    tokensIn: report.tokensIn,
    tokensOut: report.tokensOut,
    costCents: cost === null ? 0 : Math.ceil(Math.round(cost * 1e6) / 1e4),
    costKnown: cost !== null,
    billingLane: report.lane,
    runtime: adapter.runtime,
    cliSession: report.cliSession,
    cause: failure?.cause ?? null,
    reason: failure?.reason ?? null,
    outputTail: r.tail,
    agentText: report.answer,
    steps: report.steps,
    limit,
    ...stoppedBy(c.stop),
  });
}

/** Usage of this process alone: a CLI that reports its session's so far has the session's earlier runs taken off. */
function perProcess(app: App, run: RunRow, r: RunReport): RunReport {
  if (!r.cumulative || !r.cliSession) return r;
  const before = cliSessionTokens(app.engine.db, r.cliSession, run.runId);
  return {
    ...r,
    tokensIn: Math.max(0, r.tokensIn - before.tokensIn),
    tokensOut: Math.max(0, r.tokensOut - before.tokensOut),
    cachedIn: Math.min(r.cachedIn, Math.max(0, r.tokensIn - before.tokensIn)),
  };
}

/** What the run may still spend of its goal's budget, in dollars; null when the goal has no money budget. */
function budgetUsd(app: App, run: RunRow): number | null {
  const goal = run.goalId === null ? null : getGoal(app.engine.db, run.goalId);
  if (!goal || goal.budgetCents === null) return null;
  const t = goalTotals(app.engine.db, goal.goalId);
  const left = goal.budgetCents - t.spentCents - t.reservedCents + run.reservedCents;
  return Math.max(0.01, left / 100);
}
