import type { Command } from 'commander';
import { positiveInt } from './goals.js';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/**
 * `colony proposals list|show` and `colony approve|reject`: the owner's view of task-tree and agent
 * proposals, with every command line approving one lets run on the host — the same list the console,
 * the `#approvals` card and the approve reaction show (actions/proposals/card.ts).
 */
const STATUSES = ['pending', 'approved', 'rejected'] as const;
type Status = (typeof STATUSES)[number];
/** As many as the console's approvals page lists. */
const MAX_LISTED = 200;

export function registerProposals(program: Command): void {
  const proposals = program
    .command('proposals')
    .description('task-tree and agent proposals awaiting (or past) your decision');
  registerList(proposals);
  registerShow(proposals);
  for (const decision of ['approve', 'reject'] as const) {
    const c = program.command(`${decision} <proposal-id>`).description(`${decision} a pending proposal as the owner`);
    if (decision === 'reject') c.requiredOption('--reason <text>', 'why (sent to the proposer)');
    c.option('--json', 'print JSON').action(
      action((id: string, opts: { reason?: string; json?: boolean }, cmd: Command) => {
        const proposalId = positiveInt(id, 'proposal id');
        if (decision === 'reject' && !opts.reason?.trim()) throw new CliError('--reason must not be empty');
        return withOwner(cmd, async (app, owner) => {
          const [{ decideProposal }, { decisionView }] = await Promise.all([
            import('../actions/proposals.js'),
            import('../actions/proposals/card.js'),
          ]);
          const by = { key: `user-${owner.userId}`, name: owner.name, tenant: owner.userId };
          const r = decideProposal(app, by, proposalId, decision, opts.reason?.trim() ?? '', {
            actor: `user:${owner.name}`,
          });
          const view = decisionView(app.engine.db, r.proposal, r.taskIds);
          if (opts.json) return printJson(view);
          // The summary names the owner's own recipes and agent names (patterned); the stdout guard escapes any control character left.
          process.stdout.write(`${view.summary}\n`);
        });
      }),
    );
  }
}

function registerList(proposals: Command): void {
  proposals
    .command('list')
    .description('list proposals, newest first: goal, proposer, kind (tree or agent), status')
    .option('--status <status>', `only proposals in this status: ${STATUSES.join(' | ')}`, 'pending')
    .option('--json', 'print JSON (each proposal with its tree or agent and its commands)')
    .action(
      action((opts: { status: string; json?: boolean }, cmd: Command) => {
        if (!STATUSES.includes(opts.status as Status))
          throw new CliError(`--status must be one of ${STATUSES.join(', ')}, not "${opts.status}"`);
        return withOwner(cmd, async (app, owner) => {
          const [{ proposalsOf }, { proposalView }] = await Promise.all([
            import('../projections/proposal-queries.js'),
            import('../actions/proposals/card.js'),
          ]);
          const views = proposalsOf(app.engine.db, owner.userId, opts.status as Status, MAX_LISTED).map((p) =>
            proposalView(app.engine.db, p),
          );
          if (opts.json) return printJson(views);
          if (views.length === 0) return void process.stdout.write(`No ${opts.status} proposals\n`);
          for (const v of views) {
            const what = 'agent' in v ? `agent ${oneLine(v.agent.name)}` : `${v.task_count} tasks`;
            const runs = v.commands.length
              ? `, ${v.commands.length} command${v.commands.length === 1 ? '' : 's'} on the host`
              : '';
            process.stdout.write(
              `${String(v.id).padStart(4)}  ${v.status.padEnd(8)}  ${v.kind.padEnd(5)}  goal ${v.goal_id} "${oneLine(v.goal_title)}"  by ${oneLine(v.proposer)}  (${what}${runs})\n`,
            );
          }
        });
      }),
    );
}

function registerShow(proposals: Command): void {
  proposals
    .command('show <id>')
    .description('print one proposal: every command line approving it runs, then the proposed tree (or agent)')
    .option('--json', 'print JSON')
    .action(
      action((id: string, opts: { json?: boolean }, cmd: Command) => {
        const proposalId = positiveInt(id, 'proposal id');
        return withOwner(cmd, async (app, owner) => {
          const [{ getProposal }, { proposalView }, { proposalLines }] = await Promise.all([
            import('../projections/proposal-queries.js'),
            import('../actions/proposals/card.js'),
            import('./proposal-text.js'),
          ]);
          const p = getProposal(app.engine.db, proposalId);
          // Another tenant's proposal is "not found", as everywhere else: no hint that it exists.
          if (!p || p.ownerId !== owner.userId) throw new CliError(`proposal ${proposalId} not found`);
          if (opts.json) return printJson(proposalView(app.engine.db, p));
          process.stdout.write(`${proposalLines(app.engine.db, p).join('\n')}\n`);
        });
      }),
    );
}
