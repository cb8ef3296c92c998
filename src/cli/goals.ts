import type { Command } from 'commander';
import { GOAL_STATUSES, type GoalStatus } from '../events/goals.js';
import type { goalSnapshot } from '../projections/goal-snapshot.js';
import type { TaskNode } from '../projections/goal-task-tree.js';
import { withOwner } from './owner.js';
import { action, CliError, globals, openLogReader, printJson } from './shared.js';
import { registerCreate } from './goal-create.js';
import { registerEvidence } from './goal-evidence.js';
import { oneLine } from '../terminal.js';

/** `colony goals create|list|show|mode|evidence` and `colony replay` (time travel); proposals are in proposals.ts. */
export function registerGoals(program: Command): void {
  const goals = program.command('goals').description("the owner's goals");
  registerCreate(goals);
  registerList(goals);
  registerShow(goals);
  registerMode(goals);
  registerEvidence(goals);
  registerReplay(program);
}

function registerList(goals: Command): void {
  goals
    .command('list')
    .description('list goals, newest first')
    .option('--status <status>', `only goals in this status: ${GOAL_STATUSES.join(' | ')}`)
    .option('--json', 'print JSON')
    .action(
      action((opts: { status?: string; json?: boolean }, cmd: Command) => {
        if (opts.status !== undefined && !GOAL_STATUSES.includes(opts.status as GoalStatus))
          throw new CliError(`--status must be one of ${GOAL_STATUSES.join(', ')}`);
        return withOwner(cmd, async (app, owner) => {
          const { goalList } = await import('../projections/goal-snapshot.js');
          const { goals: views } = goalList(app.engine.db, owner.userId, {
            status: (opts.status as GoalStatus) ?? null,
            limit: 200,
            offset: 0,
          });
          if (opts.json) return printJson(views);
          if (views.length === 0) return void process.stdout.write('No goals\n');
          for (const g of views) {
            process.stdout.write(
              `${String(g.id).padStart(4)}  ${g.status.padEnd(9)}  ${oneLine(g.title)}  (#${g.channel}, ${g.task_count} tasks, ${g.spent_tokens} tokens, ${g.spent_dollars_cents}¢)\n`,
            );
          }
        });
      }),
    );
}

function registerShow(goals: Command): void {
  goals
    .command('show <id>')
    .description("print a goal's snapshot: tree, agents, costs, recent events")
    .option('--json', 'print JSON')
    .action(
      action((id: string, opts: { json?: boolean }, cmd: Command) => {
        const goalId = positiveInt(id, 'goal id');
        return withOwner(cmd, async (app, owner) => {
          const [{ getGoal }, { goalSnapshot }, { proposalsOfGoal }, { proposalLines }] = await Promise.all([
            import('../projections/goal-queries.js'),
            import('../projections/goal-snapshot.js'),
            import('../projections/proposal-queries.js'),
            import('./proposal-text.js'),
          ]);
          const goal = getGoal(app.engine.db, goalId);
          if (!goal || goal.ownerId !== owner.userId) throw new CliError(`goal ${goalId} not found`);
          printSnapshot(goalSnapshot(app.engine.db, goalId)!, opts.json);
          // What waits for the owner comes with the goal (JSON keeps the snapshot's shape: `colony proposals show` has the rest).
          if (opts.json) return;
          for (const p of proposalsOfGoal(app.engine.db, goalId).filter((x) => x.status === 'pending')) {
            process.stdout.write(`Pending:\n${proposalLines(app.engine.db, p, '  ').join('\n')}\n`);
          }
        });
      }),
    );
}

function registerMode(goals: Command): void {
  goals
    .command('mode <id> <mode>')
    .description(
      "set how the goal's proposals are approved: human (you react in #approvals or run colony approve) or auto (approved at once; only your registered verifier recipes ever run)",
    )
    .option('--json', 'print JSON')
    .action(
      action((id: string, mode: string, opts: { json?: boolean }, cmd: Command) => {
        const goalId = positiveInt(id, 'goal id');
        if (mode !== 'human' && mode !== 'auto') throw new CliError(`mode must be human or auto, not "${mode}"`);
        return withOwner(cmd, async (app, owner) => {
          const { setApprovalMode } = await import('../actions/goals.js');
          const g = setApprovalMode(
            app,
            { key: `user-${owner.userId}`, name: owner.name, tenant: owner.userId },
            goalId,
            mode,
            { actor: `user:${owner.name}` },
          );
          if (opts.json) return printJson({ goal_id: g.goalId, approval_mode: g.approvalMode });
          process.stdout.write(`Goal ${g.goalId} approvals: ${g.approvalMode}\n`);
        });
      }),
    );
}

function registerReplay(program: Command): void {
  program
    .command('replay')
    .description(
      "print a goal's snapshot as it was at a moment of the log (replayed into memory; the data dir is only read)",
    )
    .requiredOption('--goal <id>', 'the goal')
    .option('--at <iso>', 'a moment, e.g. 2026-11-30T12:00:00Z')
    .option('--position <n>', 'a log position')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { goal: string; at?: string; position?: string; json?: boolean }, cmd: Command) => {
        const goalId = positiveInt(opts.goal, '--goal');
        if ((opts.at === undefined) === (opts.position === undefined))
          throw new CliError('give exactly one of --at ISO or --position N');
        const at = opts.at === undefined ? null : Date.parse(opts.at);
        if (at !== null && Number.isNaN(at)) throw new CliError(`--at must be an ISO-8601 time, not "${opts.at}"`);
        const [{ readHead }, { goalSnapshot }, { positionAt, replayTo }, { productProjections }] = await Promise.all([
          import('../engine/store.js'),
          import('../projections/goal-snapshot.js'),
          import('../engine/replay.js'),
          import('../app.js'),
        ]);
        const log = await openLogReader(globals(cmd));
        const source = log.db;
        try {
          const head = readHead(source).position;
          const position =
            at !== null
              ? positionAt(source, new Date(at).toISOString())
              : positiveInt(opts.position!, '--position', true);
          if (position > head) throw new CliError(`--position ${position} is past the head of the log (${head})`);
          const mem = replayTo(source, position, productProjections);
          try {
            const snapshot = goalSnapshot(mem.db, goalId);
            if (!snapshot) throw new CliError(`goal ${goalId} does not exist at position ${position}`);
            printSnapshot(snapshot, opts.json, position);
          } finally {
            mem.close();
          }
        } finally {
          log.close();
        }
      }),
    );
}

export function positiveInt(value: string, what: string, zero = false): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || (!zero && n < 1))
    throw new CliError(`${what} must be a ${zero ? 'non-negative' : 'positive'} integer, not "${value}"`);
  return n;
}

type Snapshot = NonNullable<ReturnType<typeof goalSnapshot>>;
function printSnapshot(s: Snapshot, json: boolean | undefined, position?: number): void {
  if (json) return printJson(position === undefined ? s : { position, ...s });
  const g = s.goal;
  const out: string[] = [];
  if (position !== undefined) out.push(`(as of log position ${position})`);
  out.push(`Goal ${g.id} "${oneLine(g.title)}" — ${g.status}   #${g.channel}   coordinator ${g.coordinator}`);
  out.push(
    `Budget: ${g.budget_tokens ?? '∞'} tokens / ${g.budget_dollars_cents ?? '∞'}¢   spent: ${g.spent_tokens} tokens / ${g.spent_dollars_cents}¢`,
  );
  const walk = (n: TaskNode, depth: number) => {
    const waiting = n.blocked_by.filter((b) => !b.done).map((b) => `#${b.id}`);
    out.push(
      `${'  '.repeat(depth + 1)}#${n.id} [${n.status}] ${oneLine(n.title)}${n.assignee ? ` (${n.assignee.name})` : ''} — ${n.rollup.tokens} tokens, ${n.rollup.dollars_cents}¢${waiting.length ? ` — waits on ${waiting.join(', ')}` : ''}`,
    );
    n.children.forEach((c) => walk(c, depth + 1));
  };
  out.push(s.tasks_tree.length ? 'Tasks:' : 'Tasks: none yet');
  s.tasks_tree.forEach((n) => walk(n, 0));
  out.push('Recent events:');
  for (const e of s.recent_events.slice(-10))
    out.push(`  ${e.created_at}  ${e.from}: ${oneLine(e.body.split('\n')[0]!)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}
