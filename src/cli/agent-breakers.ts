import type { Command } from 'commander';
import type { App } from '../app.js';
import type { BreakerOverrides } from '../events/breakers.js';
import type { AgentRow } from '../projections/principal-queries.js';
import { oneLine } from '../terminal.js';
import { withAgent } from './owner.js';
import { action, CliError, printJson } from './shared.js';

/**
 * `colony agents resume NAME [--goal G|none]` lifts the loop breakers that paused an agent (all of them, or
 * one goal's; `none`: its work outside goals), and `colony agents breakers NAME` shows — or sets, then
 * shows — its breaker thresholds and its open breakers. What an action needs is imported when it runs.
 */
export function registerAgentBreakers(agents: Command): void {
  registerResume(agents);
  registerThresholds(agents);
}

function registerResume(agents: Command): void {
  agents
    .command('resume <name>')
    .description('lift the loop breakers that paused an agent: its runs on that goal are no longer refused')
    .option('--goal <id>', 'only the breaker of this goal ("none": its work outside goals); default: all')
    .option('--json', 'print what was lifted as JSON')
    .action(
      action((name: string, opts: { goal?: string; json?: boolean }, cmd: Command) => {
        const goal = opts.goal === undefined ? 'all' : goalOption(opts.goal);
        return withAgent(cmd, name, async (app, owner, agent) => {
          const { resumeAgent } = await import('../actions/breakers.js');
          const lifted = resumeAgent(app, owner.userId, agent.agentId, goal, { actor: `user:${owner.name}` });
          if (opts.json)
            return printJson({ agent: name, lifted: lifted.map((l) => ({ goal_id: l.goalId, breaker: l.breaker })) });
          if (lifted.length === 0) {
            const where = goal === 'all' ? '' : ` on ${goal === null ? 'work outside goals' : `goal ${goal}`}`;
            process.stdout.write(`${name} has no open breaker${where}: nothing to lift\n`);
          }
          for (const l of lifted)
            process.stdout.write(
              `Lifted the ${l.breaker} breaker of ${name} on ${l.goalId === null ? 'work outside goals' : `goal ${l.goalId}`}\n`,
            );
        });
      }),
    );
}

function goalOption(raw: string): number | null {
  if (raw === 'none') return null;
  if (!/^[1-9]\d*$/.test(raw)) throw new CliError(`--goal must be a goal id or "none", not "${raw}"`);
  return Number(raw);
}

interface ThresholdOptions {
  maxRunsWithoutProgress?: string;
  maxRepeatedFailures?: string;
  maxWakesPerHour?: string;
  json?: boolean;
}

function registerThresholds(agents: Command): void {
  agents
    .command('breakers <name>')
    .description(
      'show or change an agent\'s loop-breaker thresholds (0 turns one off, "default" resets it) and its open breakers',
    )
    .option('--max-runs-without-progress <n>', 'runs in a row on a goal that change nothing before it is paused')
    .option('--max-repeated-failures <n>', 'failures in a row of the same call, the same way, before it is paused')
    .option('--max-wakes-per-hour <n>', 'wake-ups from probes and task timers in an hour before it is paused')
    .option('--json', 'print the thresholds and open breakers as JSON')
    .action(
      action((name: string, opts: ThresholdOptions, cmd: Command) => {
        const changes = parseThresholds(opts);
        return withAgent(cmd, name, async (app, owner, agent) => {
          if (Object.keys(changes).length > 0) {
            const { configureBreakers } = await import('../actions/breakers.js');
            configureBreakers(app, owner.userId, agent.agentId, changes, { actor: `user:${owner.name}` });
          }
          await showBreakers(app, agent, opts.json === true);
        });
      }),
    );
}

function parseThresholds(opts: ThresholdOptions): Partial<BreakerOverrides> {
  const out: Partial<BreakerOverrides> = {};
  const fields: [keyof BreakerOverrides, string | undefined, string][] = [
    ['maxRunsWithoutProgress', opts.maxRunsWithoutProgress, '--max-runs-without-progress'],
    ['maxRepeatedFailures', opts.maxRepeatedFailures, '--max-repeated-failures'],
    ['maxWakesPerHour', opts.maxWakesPerHour, '--max-wakes-per-hour'],
  ];
  for (const [key, raw, flag] of fields) {
    if (raw === undefined) continue;
    if (raw === 'default') out[key] = null;
    else if (!/^\d{1,7}$/.test(raw))
      throw new CliError(`${flag} must be an integer ≥ 0 (0 turns it off) or "default", not "${raw}"`);
    else out[key] = Number(raw);
  }
  return out;
}

async function showBreakers(app: App, agent: AgentRow, json: boolean): Promise<void> {
  const { breakerDetail } = await import('../actions/breakers/view.js');
  const d = breakerDetail(app.engine.db, agent.agentId);
  if (json) return printJson({ agent: agent.name, ...d });
  const off = (n: number, unit: string): string => (n === 0 ? 'off' : `${n} ${unit}`);
  process.stdout.write(
    `${agent.name}: no progress ${off(d.max_runs_without_progress, 'runs')}, repeated failure ${off(d.max_repeated_failures, 'calls')}, wake rate ${off(d.max_wakes_per_hour, 'an hour')}\n`,
  );
  if (d.breakers.length === 0) process.stdout.write('  no open breaker\n');
  for (const b of d.breakers) {
    const where = b.goal_id === null ? 'work outside goals' : `goal ${b.goal_id} "${oneLine(b.goal_title ?? '')}"`;
    process.stdout.write(`  ${b.breaker} on ${where}, tripped ${b.tripped_at}: ${oneLine(b.reason ?? '')}\n`);
    process.stdout.write(`    evidence: runs ${b.evidence?.run_ids.join(', ') || 'none'}; lift: ${b.lift}\n`);
  }
}
