import type { Command } from 'commander';
import { registerRuntimeSettings } from './agent-settings.js';
import { registerAgentBreakers } from './agent-breakers.js';
import { withAgent } from './owner.js';
import { action, CliError, printJson } from './shared.js';

// What an action needs is imported when it runs, so that defining these commands (and --help) stays cheap.
const agentRuntime = () => import('../actions/runs/agent-controls.js');
const runQueries = () => import('../projections/run-queries.js');

/**
 * `colony agents wake|stop|start|runtime|resume|breakers`: the owner's controls over running agents. `wake`
 * queues a manual run (the serving process starts it within a poll; `colony runs show ID` follows it);
 * `runtime` is in agent-settings.ts, `resume` and `breakers` (the loop breakers) in agent-breakers.ts.
 */
export function registerAgentRuntime(agents: Command): void {
  registerWake(agents);
  registerStopStart(agents);
  registerRuntimeSettings(agents);
  registerAgentBreakers(agents);
}

function registerWake(agents: Command): void {
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
}

function registerStopStart(agents: Command): void {
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
}

function positiveInt(raw: string, flag: string): number {
  if (!/^[1-9]\d*$/.test(raw)) throw new CliError(`${flag} must be a positive integer, not "${raw}"`);
  return Number(raw);
}
