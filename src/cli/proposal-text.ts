import type { Database } from 'better-sqlite3';
import { proposalCommands, treeOutline } from '../actions/proposals/card.js';
import type { AgentSpec, TreeNode } from '../events/proposals.js';
import { getGoal } from '../projections/goal-queries.js';
import type { ProposalRow } from '../projections/proposal-queries.js';
import { oneLine } from '../terminal.js';

/**
 * A proposal as `colony proposals show` and `colony goals show` print it. Like the `#approvals` card,
 * every command line approving it lets run on the host comes first and in full, whatever else is cut.
 * Everything the proposer wrote (titles, reasoning, names) is one escaped line per field, so a title
 * cannot fake a line of the command list. Loaded only by actions (it reads the store's modules).
 */
const REASONING_SHOWN = 600;

export function proposalLines(db: Database, p: ProposalRow, indent = ''): string[] {
  const goal = getGoal(db, p.goalId);
  const kind = p.kind === 'task_tree' ? `task tree (${p.taskCount} tasks)` : 'agent';
  const out = [
    `Proposal ${p.proposalId} — ${kind} for goal ${p.goalId} "${oneLine(goal?.title ?? '')}" — ${p.status}`,
    `Proposed by ${oneLine(p.proposerName)} at ${p.createdAt}${p.parentTaskId !== null ? ` for task ${p.parentTaskId}` : ''}`,
  ];
  if (p.status !== 'pending')
    out.push(
      `Decided by ${oneLine(p.decidedBy ?? '?')} at ${p.decidedAt ?? '?'}${p.reason ? `: ${oneLine(clip(p.reason))}` : ''}`,
    );
  const commands = proposalCommands(db, p);
  const whose = p.kind === 'agent' ? 'the backend it inherits from its proposer' : 'your verifier recipes';
  out.push(
    commands.length
      ? `Commands approving it runs on this host (${whose}), in full:`
      : 'Commands approving it runs on this host: none',
  );
  out.push(...commands.map((c) => `  * ${oneLine(c)}`));
  if (p.reasoning) out.push(`${p.kind === 'agent' ? 'Reason' : 'Reasoning'}: ${oneLine(clip(p.reasoning))}`);
  if (p.kind === 'task_tree') {
    out.push('Tree:', ...treeOutline(p.tree as TreeNode).map((line) => `  ${oneLine(line)}`));
  } else {
    const a = p.tree as AgentSpec;
    out.push(
      `Agent: ${oneLine(a.name)}, model ${oneLine(a.model)}, tier ${a.tier}, tools ${a.toolScope.map(oneLine).join(', ') || 'none'}`,
    );
  }
  if (p.status === 'pending')
    out.push(`Decide: colony approve ${p.proposalId}  |  colony reject ${p.proposalId} --reason TEXT`);
  return out.map((line) => `${indent}${line}`);
}

/** A long reasoning is cut in text output (`--json` has all of it). */
const clip = (text: string): string =>
  text.length > REASONING_SHOWN ? `${text.slice(0, REASONING_SHOWN)}… (--json shows all)` : text;
