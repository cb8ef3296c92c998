import type { Command } from 'commander';
import type { RequestStatus } from '../events/resources.js';
import type { UserRow } from '../projections/principal-queries.js';
import type { ResourceRequestRow } from '../projections/resources.js';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/**
 * `colony requests list|refuse`: the agents' `request_resource` requests, and the owner's refusal with a
 * reason (the requester gets it by DM) — so a request the owner will not fulfil is never left hanging.
 * Fulfilling one is `colony secrets set NAME - --scope agent:REQUESTER`. Reasons and names come from
 * agents: every field is printed on one line, escaped.
 */
const STATUSES: readonly RequestStatus[] = ['pending', 'fulfilled', 'rejected', 'revoked'];
const MAX_REASON = 2000;
const ownerSpeaker = (o: UserRow) => ({ key: `user-${o.userId}`, name: o.name, tenant: o.userId });

export function registerRequests(program: Command): void {
  const requests = program
    .command('requests')
    .description('resource requests from agents (request_resource): list them, refuse one with a reason');
  requests
    .command('list')
    .description(
      'requests in one status, newest first (fulfil one with: colony secrets set NAME - --scope agent:REQUESTER)',
    )
    .option('--status <status>', `${STATUSES.join(' | ')}`, 'pending')
    .option('--limit <n>', 'at most this many (1–1000)', '100')
    .option('--json', 'print a JSON array')
    .action(
      action((opts: { status: string; limit: string; json?: boolean }, cmd: Command) => {
        if (!STATUSES.includes(opts.status as RequestStatus))
          throw new CliError(`--status must be one of ${STATUSES.join(', ')}, not "${opts.status}"`);
        if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 1000)
          throw new CliError(`--limit must be a whole number from 1 to 1000, not "${opts.limit}"`);
        return withOwner(cmd, async (app, owner) => {
          const { requestsOf } = await import('../projections/resources.js');
          const rows = requestsOf(app.engine.db, owner.userId, opts.status as RequestStatus, Number(opts.limit));
          if (opts.json) return printJson(rows.map(view));
          if (rows.length === 0) return void process.stdout.write(`No ${opts.status} resource requests\n`);
          for (const r of rows) process.stdout.write(`${line(r)}\n`);
        });
      }),
    );
  requests
    .command('refuse <id>')
    .description(
      'refuse a pending request with a reason: it becomes rejected and the requesting agent gets the reason by DM',
    )
    .requiredOption('--reason <text>', `why (1–${MAX_REASON} characters; the agent reads it)`)
    .option('--json', 'print {"request_id","status","name","task_id","requester","reason"}')
    .action(
      action((id: string, opts: { reason: string; json?: boolean }, cmd: Command) => {
        if (!/^[1-9]\d*$/.test(id)) throw new CliError(`request id must be a positive integer, not "${id}"`);
        const reason = opts.reason.trim();
        if (reason.length === 0 || reason.length > MAX_REASON)
          throw new CliError(`--reason must be 1–${MAX_REASON} characters (not blank)`);
        return withOwner(cmd, async (app, owner) => {
          const { rejectRequest } = await import('../actions/resources.js');
          const r = rejectRequest(app, ownerSpeaker(owner), Number(id), reason, { actor: `user:${owner.name}` });
          if (opts.json)
            return printJson({
              request_id: r.requestId,
              status: r.status,
              name: r.name,
              task_id: r.taskId,
              requester: r.requesterName,
              reason: r.rejectionReason,
            });
          process.stdout.write(
            `Refused resource request #${r.requestId} (${r.name} for task #${r.taskId} from ${oneLine(r.requesterName)}); ${oneLine(r.requesterName)} was told by DM: ${oneLine(r.rejectionReason ?? reason)}\n`,
          );
        });
      }),
    );
}

const view = (r: ResourceRequestRow) => ({
  id: r.requestId,
  status: r.status,
  name: r.name,
  resource_type: r.resourceType,
  reason: r.reason,
  task_id: r.taskId,
  goal_id: r.goalId,
  requester: r.requesterName,
  requester_id: r.requesterAgentId,
  created_at: r.createdAt,
  fulfilled_at: r.fulfilledAt,
  fulfilled_scope: r.fulfilledScope,
  rejected_at: r.rejectedAt,
  rejection_reason: r.rejectionReason,
});

function line(r: ResourceRequestRow): string {
  const outcome =
    r.status === 'fulfilled'
      ? `  fulfilled by ${r.fulfilledScope} ${r.fulfilledAt}`
      : r.status === 'rejected'
        ? `  refused ${r.rejectedAt ?? ''}: ${oneLine(r.rejectionReason ?? '(no reason recorded)')}`
        : '';
  return `#${r.requestId}  ${r.status}  ${r.name} (${r.resourceType})  task #${r.taskId}  from ${oneLine(r.requesterName)}  ${r.createdAt}  — ${oneLine(r.reason)}${outcome}`;
}
