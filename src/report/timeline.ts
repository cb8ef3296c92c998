import { sandboxLabel } from '../events/sandbox.js';
import type { Database } from 'better-sqlite3';
import type { ChannelEvent } from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import type { GoalEvent } from '../events/goals.js';
import type { ProposalEvent } from '../events/proposals.js';
import type { RunEvent } from '../events/runs.js';
import { readStream } from '../engine/store.js';
import type { TaskEvent } from '../events/tasks.js';

/**
 * The report's timeline: every event of a goal's own streams (the goal, its tasks, its proposals, its
 * channel, its runs) in log order, each with a one-line summary. Summaries are plain text made from
 * the events' data; the renderer escapes them like everything else that came from agents or users.
 */
export interface TimelineEntry {
  position: number;
  at: string;
  stream: string;
  type: string;
  actor: string;
  summary: string;
}

/** The events of `streams` merged in log position order (each stream is read once, whole). */
export function eventsOf(db: Database, streams: readonly string[]): StoredEvent[] {
  const all = [...new Set(streams)].flatMap((s) => readStream(db, s));
  return all.sort((a, b) => a.position - b.position);
}

export function timelineOf(events: readonly StoredEvent[], agentName: (id: number) => string): TimelineEntry[] {
  return events.map((e) => ({
    position: e.position,
    at: e.recordedAt,
    stream: e.streamId,
    type: e.type,
    actor: e.meta.actor,
    summary: oneLine(summarize(e, agentName)),
  }));
}

const SUMMARY_MAX = 240;
/** One line of at most `max` characters (code points, so no surrogate pair is cut in half). */
export function oneLine(text: string, max = SUMMARY_MAX): string {
  const flat = Array.from(text.replace(/\s+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1).join('')}…` : flat.join('');
}

type Known = GoalEvent | TaskEvent | ProposalEvent | ChannelEvent | RunEvent;
const amount = (tokens: number, cents: number): string => `${tokens} tokens, ${cents}¢`;

/** A readable line per event type: the notice a transition posted to the goal channel, else one made from the data. */
function summarize(stored: StoredEvent, agentName: (id: number) => string): string {
  const e = stored as unknown as Known;
  const notice = (e.data as { notice?: { body?: unknown } | null } | null)?.notice;
  if (notice && typeof notice.body === 'string') return notice.body;
  switch (e.type) {
    case 'GoalCreated':
      return `Goal "${e.data.title}" created by ${e.data.by} (budget ${e.data.budgets.tokens ?? '∞'} tokens / ${e.data.budgets.cents ?? '∞'}¢, approval ${e.data.approvalMode})`;
    case 'CostRecorded':
      return `${e.data.by.name} spent ${amount(e.data.tokens, e.data.cents)} on task #${e.data.taskId} (${e.data.source}${e.data.note ? `: ${e.data.note}` : ''})`;
    case 'TaskClaimed':
      return `${e.data.agentName} renewed its lease on task #${e.data.taskId} until ${e.data.leaseExpiresAt}`;
    case 'TaskTreeProposed':
      return `${e.data.proposer.name} proposed a task tree of ${e.data.taskCount} tasks: ${e.data.reasoning}`;
    case 'AgentProposed':
      return `${e.data.proposer.name} proposed agent "${e.data.agent.name}" (${e.data.agent.tier}, ${e.data.agent.model}): ${e.data.reason}`;
    case 'ProposalApproved':
      return `Proposal approved by ${e.data.by.name}${e.data.auto ? ' (auto)' : ''}${e.data.taskIds.length ? `: tasks ${e.data.taskIds.join(', ')}` : ''}${e.data.agentId ? `: agent ${agentName(e.data.agentId)}` : ''}`;
    case 'ProposalRejected':
      return `Proposal rejected by ${e.data.by.name}: ${e.data.reason}`;
    case 'ChannelCreated':
      return `Channel #${e.data.name} created`;
    case 'MessagePosted':
      return `${e.data.fromName}${e.data.metadata?.kind === 'artifact' ? ' [artifact]' : ''}: ${e.data.body}`;
    case 'ReactionAdded':
      return `${e.data.byName} reacted ${e.data.reaction} to message #${e.data.messageId}`;
    case 'ReactionRemoved':
      return `${e.data.by} removed ${e.data.reaction} from message #${e.data.messageId}`;
    case 'MessagesRead':
      return `${e.data.principal} read up to message #${e.data.upTo}`;
    default:
      return runSummary(e, agentName);
  }
}

type Rest = Exclude<
  Known,
  {
    type:
      | 'GoalCreated'
      | 'CostRecorded'
      | 'TaskClaimed'
      | 'TaskTreeProposed'
      | 'AgentProposed'
      | 'ProposalApproved'
      | 'ProposalRejected'
      | ChannelEvent['type'];
  }
>;

function runSummary(e: Rest, agentName: (id: number) => string): string {
  switch (e.type) {
    case 'RunQueued':
      return `Run #${e.data.runId} of ${agentName(e.data.agentId)} queued (${e.data.wake.source}${e.data.taskId ? `, task #${e.data.taskId}` : ''}${e.data.reason ? `, waits: ${e.data.reason}` : ''})`;
    case 'RunWakeMerged':
      return `Wake-up (${e.data.wake.source}) merged into run #${e.data.runId}`;
    case 'RunRefused':
      return `Run #${e.data.runId} of ${agentName(e.data.agentId)} refused by the ${e.data.gate} gate: ${e.data.reason}`;
    case 'RunLaunched':
      return `Run #${e.data.runId} of ${agentName(e.data.agentId)} launched ${sandboxLabel(e.data.sandbox)}`;
    case 'RunStarted':
      return `Run #${e.data.runId} of ${agentName(e.data.agentId)} started (timeout ${e.data.timeoutSec} s, reserved ${amount(e.data.reservation.tokens, e.data.reservation.cents)})`;
    case 'RunFinished': {
      const d = e.data;
      return `Run #${d.runId} of ${agentName(d.agentId)} ${d.status} (exit ${d.exitCode ?? d.signal ?? '?'}, ${d.durationMs} ms, ${d.tokensIn} in / ${d.tokensOut} out tokens, ${d.costCents}¢)${d.limit ? `: hit its ${d.limit} limit` : ''}`;
    }
    case 'RunTimedOut':
      return `Run #${e.data.runId} of ${agentName(e.data.agentId)} timed out after ${e.data.timeoutSec} s`;
    case 'RunFailed':
      return `Run #${e.data.runId} of ${agentName(e.data.agentId)} failed: ${e.data.reason}`;
    case 'TaskUpdated':
      return `Task #${e.data.taskId} updated by ${e.data.by.name}: ${e.data.labels.join(', ')}`;
    case 'SessionMessageRecorded':
      return `${e.data.role} message ${e.data.seq} of run #${e.data.runId}${e.data.truncated ? ' (truncated)' : ''}: ${e.data.content}`;
    // Transitions always carry their notice (handled above); an event recorded without one reads as its type.
    case 'GoalActivated':
    case 'GoalPaused':
    case 'GoalResumed':
    case 'GoalClosed':
    case 'BudgetAlertRaised':
    case 'GoalApprovalModeSet':
    case 'GoalEvidenceRuleSet':
    case 'TaskCreated':
    case 'TaskStarted':
    case 'TaskCompleted':
    case 'TaskVerified':
    case 'TaskReleased':
    case 'ClaimExpired':
    case 'TaskCancelled':
    case 'TaskDispatched':
    case 'TaskBlockersSet':
    case 'TaskTimedOut':
    case 'TaskBudgetAlertRaised':
      return e.type;
    default: {
      // An event type this report does not know yet (a newer domain on the same stream): its name is still a fact.
      const unknown: never = e;
      return (unknown as { type: string }).type;
    }
  }
}
