import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/**
 * `colony goals create`: the owner's create_goal. The flags are checked by create_goal's own schema
 * (mcp/tools/goals.ts), so the CLI and MCP make the same goal with the same defaults — coordinator
 * `default`, spawn depth 3, approvals by the owner unless `--auto`.
 */
interface Options {
  title: string;
  description: string;
  budgetCents?: string;
  budgetTokens?: string;
  auto?: boolean;
  requireEvidence?: boolean;
  maxRejections?: string;
  json?: boolean;
}

/** The schema's field → the flag the owner typed, so an error names what to fix. */
const FLAG: Record<string, string> = {
  title: '--title',
  description: '--description',
  budget_dollars_cents: '--budget-cents',
  budget_tokens: '--budget-tokens',
  max_rejections: '--max-rejections',
};

export function registerCreate(goals: Command): void {
  goals
    .command('create')
    .description(
      'create a goal (draft) with its #goal-<slug> channel; the default coordinator is woken to propose a task tree',
    )
    .requiredOption('--title <text>', 'what to achieve (3–200 characters)')
    .requiredOption('--description <text>', 'what done looks like (at least 10 characters)')
    .option('--budget-cents <n>', 'cap on spend in US cents (default: no cap)')
    .option('--budget-tokens <n>', 'cap on tokens (default: no cap)')
    .option(
      '--auto',
      'approve its proposals at once (approval mode auto; only your registered verifier recipes ever run)',
    )
    .option(
      '--no-require-evidence',
      'let auto verifiers mark leaves done (default: a leaf is done only by a recipe, an independent peer or you)',
    )
    .option('--max-rejections <n>', 'rejected hand-ins sent back to the assignee before one fails the task (default 2)')
    .option('--json', 'print {"goal_id","slug","channel","channel_id","coordinator_agent_id","status","approval_mode"}')
    .action(
      action(async (opts: Options, cmd: Command) => {
        const goal = await checkedGoal(opts);
        const { newGoal } = await import('../mcp/tools/goals.js');
        return withOwner(cmd, async (app, owner) => {
          const [{ createGoal }, { goalChannelName }] = await Promise.all([
            import('../actions/goals.js'),
            import('../events/goals.js'),
          ]);
          const by = { key: `user-${owner.userId}`, name: owner.name, tenant: owner.userId };
          const g = createGoal(app, by, newGoal(goal), { actor: `user:${owner.name}` });
          const channel = goalChannelName(g.slug);
          if (opts.json) {
            return printJson({
              goal_id: g.goalId,
              slug: g.slug,
              channel,
              channel_id: g.channelId,
              coordinator_agent_id: g.coordinatorAgentId,
              status: g.status,
              approval_mode: goal.approval_mode,
            });
          }
          process.stdout.write(
            `Created goal ${g.goalId} "${oneLine(goal.title)}" — ${g.status}   #${channel}   approvals: ${goal.approval_mode}\n`,
          );
        });
      }),
    );
}

/** The goal the flags describe, checked by create_goal's own schema before the store is opened: a wrong flag writes nothing. */
async function checkedGoal(opts: Options) {
  const { CreateGoalInput } = await import('../mcp/tools/goals.js');
  const parsed = CreateGoalInput.safeParse({
    title: opts.title,
    description: opts.description,
    budget_dollars_cents: budget(opts.budgetCents, '--budget-cents'),
    budget_tokens: budget(opts.budgetTokens, '--budget-tokens'),
    approval_mode: opts.auto ? 'auto' : 'human',
    require_evidence: opts.requireEvidence !== false,
    max_rejections: budget(opts.maxRejections, '--max-rejections'),
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  throw new CliError(`${FLAG[field] ?? field}: ${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)}`);
}

/** Flags arrive as text: only digits are a budget (the schema then checks the range). */
function budget(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n))
    throw new CliError(`${flag} must be a non-negative integer, not "${raw}"`);
  return n;
}
