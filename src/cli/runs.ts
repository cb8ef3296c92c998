import type { Command } from 'commander';
import type { RunRow, RunRowStatus } from '../projections/run-queries.js';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/** `colony runs list|show`: agent runs, newest first, and one run with its session transcript. */
const STATUSES: readonly RunRowStatus[] = ['queued', 'running', 'refused', 'succeeded', 'failed', 'timed_out'];

export function registerRuns(program: Command): void {
  const runs = program.command('runs').description('agent runs and their sessions');
  registerList(runs);
  registerShow(runs);
}

function registerList(runs: Command): void {
  runs
    .command('list')
    .description('runs, newest first')
    .option('--agent <name>', "only this agent's runs")
    .option('--goal <id>', 'only runs about this goal')
    .option('--status <status>', `only runs in this status: ${STATUSES.join(' | ')}`)
    .option('--limit <n>', 'at most this many (1–500)', '50')
    .option('--json', 'print a JSON array')
    .action(
      action((opts: ListOptions, cmd: Command) => {
        const f = parseList(opts);
        return withOwner(cmd, async (app, owner) => {
          const [{ getAgent, getAgentByName }, { listRuns }] = await Promise.all([
            import('../projections/principal-queries.js'),
            import('../projections/run-queries.js'),
          ]);
          const agent = opts.agent === undefined ? null : getAgentByName(app.engine.db, owner.userId, opts.agent);
          if (opts.agent !== undefined && !agent) throw new CliError(`agent ${opts.agent} not found`);
          const rows = listRuns(app.engine.db, {
            ownerId: owner.userId,
            agentId: agent?.agentId ?? null,
            goalId: f.goalId,
            status: f.status,
            limit: f.limit,
          });
          if (opts.json)
            return printJson(
              rows.map((r) => ({ ...summary(r), agent: getAgent(app.engine.db, r.agentId)?.name ?? null })),
            );
          if (rows.length === 0) return void process.stdout.write('No runs\n');
          for (const r of rows)
            process.stdout.write(`${line(r, getAgent(app.engine.db, r.agentId)?.name ?? `#${r.agentId}`)}\n`);
        });
      }),
    );
}

function registerShow(runs: Command): void {
  runs
    .command('show <id>')
    .description('one run: its wake-ups, outcome, usage and session transcript')
    .option('--json', 'print JSON')
    .action(
      action((id: string, opts: { json?: boolean }, cmd: Command) => {
        if (!/^[1-9]\d*$/.test(id)) throw new CliError(`run id must be a positive integer, not "${id}"`);
        return withOwner(cmd, async (app, owner) => {
          const [{ getAgent }, { getRun }, { sessionMessages }, { sandboxLabel }] = await Promise.all([
            import('../projections/principal-queries.js'),
            import('../projections/run-queries.js'),
            import('../projections/session-message-queries.js'),
            import('../events/sandbox.js'),
          ]);
          const run = getRun(app.engine.db, Number(id));
          if (!run || run.ownerId !== owner.userId) throw new CliError(`run ${id} not found`);
          const agent = getAgent(app.engine.db, run.agentId)?.name ?? `#${run.agentId}`;
          const transcript = sessionMessages(app.engine.db, run.runId);
          if (opts.json)
            return printJson({
              ...summary(run),
              agent,
              wakes: run.wakes,
              sandbox: run.sandbox,
              output_tail: run.outputTail,
              transcript,
            });
          const out = [
            line(run, agent),
            `wakes: ${run.wakes.map((w) => `${w.source} by ${w.by}${w.messageIds.length ? ` (messages ${w.messageIds.join(',')})` : ''}`).join('; ')}`,
          ];
          if (run.reason) out.push(`reason: ${oneLine(run.reason)}`);
          if (run.startedAt)
            out.push(`sandbox: ${run.sandbox || run.finishedAt ? sandboxLabel(run.sandbox) : '(being prepared)'}`);
          if (run.limitHit) out.push(`limit: it ran into its ${run.limitHit} limit`);
          for (const m of transcript)
            out.push('', `--- ${m.role} #${m.seq} ${m.at}${m.truncated ? ' (truncated)' : ''}`, m.content);
          process.stdout.write(`${out.join('\n')}\n`);
        });
      }),
    );
}

interface ListOptions {
  agent?: string;
  goal?: string;
  status?: string;
  limit: string;
  json?: boolean;
}

function parseList(opts: ListOptions): { goalId: number | null; status: RunRowStatus | null; limit: number } {
  if (opts.status !== undefined && !STATUSES.includes(opts.status as RunRowStatus))
    throw new CliError(`--status must be one of ${STATUSES.join(', ')}, not "${opts.status}"`);
  if (opts.goal !== undefined && !/^[1-9]\d*$/.test(opts.goal))
    throw new CliError(`--goal must be a positive integer, not "${opts.goal}"`);
  if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 500)
    throw new CliError(`--limit must be an integer in 1–500, not "${opts.limit}"`);
  return {
    goalId: opts.goal === undefined ? null : Number(opts.goal),
    status: (opts.status as RunRowStatus | undefined) ?? null,
    limit: Number(opts.limit),
  };
}

const summary = (r: RunRow) => ({
  run_id: r.runId,
  agent_id: r.agentId,
  session_id: r.sessionId,
  source: r.source,
  status: r.status,
  gate: r.gate,
  reason: r.reason,
  task_id: r.taskId,
  goal_id: r.goalId,
  depth: r.depth,
  queued_at: r.queuedAt,
  started_at: r.startedAt,
  finished_at: r.finishedAt,
  exit_code: r.exitCode,
  duration_ms: r.durationMs,
  tokens_in: r.tokensIn,
  tokens_out: r.tokensOut,
  cost_cents: r.costCents,
  cost_known: r.costKnown,
  billing_lane: r.billingLane,
  runtime: r.runtime,
  cli_session: r.cliSession,
  cause: r.cause,
  reported_tokens: r.reportedTokens,
  reported_cents: r.reportedCents,
  trace_id: r.traceId,
  limit_hit: r.limitHit,
  sandbox_mode: r.sandbox?.mode ?? null,
});

function line(r: RunRow, agent: string): string {
  const outcome = r.status === 'refused' ? `refused (${r.gate})` : r.status;
  const reported =
    r.reportedTokens || r.reportedCents ? ` (+ reported ${r.reportedTokens} tokens ${r.reportedCents}¢)` : '';
  const usage = r.startedAt
    ? `  ${r.durationMs ?? '-'} ms  ${r.tokensIn}/${r.tokensOut} tokens  ${r.costKnown ? `${r.costCents}¢` : 'cost unknown'}${r.billingLane ? ` (${r.billingLane})` : ''}${reported}`
    : '';
  const limit = r.limitHit ? `  [${r.limitHit} limit]` : '';
  const unconfined = r.sandbox?.mode === 'off' ? '  [UNCONFINED]' : '';
  return `${String(r.runId).padStart(5)}  ${agent}  ${r.runtime ? `${r.runtime}  ` : ''}${r.source}  ${outcome}${r.cause ? ` (${r.cause})` : ''}${limit}${unconfined}${r.taskId ? `  task ${r.taskId}` : ''}${usage}  ${r.queuedAt}`;
}
