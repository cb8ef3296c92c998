import type { Database } from 'better-sqlite3';
import type { WakeRequest } from '../actions/runs.js';
import { MENTION, senderKind } from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import { getChannel } from '../projections/channel-queries.js';
import { goalIdOfChannel } from '../projections/goal-queries.js';
import { getAgent, getAgentByName } from '../projections/principal-queries.js';
import { runningRunOf, type RunRow } from '../projections/run-queries.js';
import { taskWakes } from './task-wakes.js';
import { unblockWakes, waitsOnBlockers } from './task-unblock.js';
import { probeWakePrompt } from './wake-prompts.js';

/**
 * Which committed facts wake whom: goal_created wakes the goal's
 * coordinator, a fresh claim its assignee (task_assignment, with the task context), a DM its recipient
 * and an @mention each mentioned agent but the author (message_received — probe when the DM is a
 * probe's envelope, which only Colony posts: the wake is then by the probe's creator and its prompt names
 * them, so a probe never reads as a message from `system`). Task facts — handed in for a peer (verification_requested), a parent's children
 * all done (children_done), a project task dispatched (task_dispatched) — are task-wakes.ts's; a task's blockers all done
 * (task_unblocked) is task-unblock.ts's, and a wake-up to work on a task that still waits on one waits. A
 * message sent by an agent during its run wakes at that run's depth + 1, so chains of agents waking
 * each other stop at the max trigger depth; its run belongs to the goal the message is about. Agents
 * without a backend are run from outside: not woken.
 */
export interface MessageFact {
  messageId: number;
  channelId: number;
  from: string;
  body: string;
  metadata: Record<string, unknown> | null;
}

export function wakesFor(db: Database, e: StoredEvent): WakeRequest[] {
  const d = e.data as Record<string, unknown>;
  const wakes: WakeRequest[] = [];
  switch (e.type) {
    case 'GoalCreated':
      wakes.push({
        agentId: d.coordinatorAgentId as number,
        source: 'goal_created',
        goalId: d.goalId as number,
        by: 'system',
      });
      break;
    case 'TaskClaimed':
      if (!d.renewed)
        wakes.push({
          agentId: d.agentId as number,
          source: 'task_assignment',
          taskId: d.taskId as number,
          by: 'system',
        });
      break;
    case 'TaskCompleted':
    case 'TaskVerified':
    case 'TaskCancelled':
    case 'TaskDispatched':
      wakes.push(...taskWakes(db, e), ...unblockWakes(db, e));
      break;
    case 'TaskBlockersSet':
      wakes.push(...unblockWakes(db, e));
      break;
    case 'MessagePosted':
      wakes.push(...messageWakes(db, d as unknown as MessageFact));
      break;
    default:
  }
  return wakes.filter((w) => getAgent(db, w.agentId)?.runnable && !waitsOnBlockers(db, w));
}

function messageWakes(db: Database, m: MessageFact): WakeRequest[] {
  const channel = getChannel(db, m.channelId);
  if (!channel) return [];
  const author = agentIdOf(m.from);
  const targets = new Set<number>();
  if (channel.kind === 'dm') {
    for (const key of channel.members) if (key !== m.from && agentIdOf(key) !== null) targets.add(agentIdOf(key)!);
  } else {
    for (const [, name] of m.body.matchAll(MENTION)) {
      const agent = getAgentByName(db, channel.ownerId, name!);
      if (agent && agent.agentId !== author) targets.add(agent.agentId);
    }
  }
  // Most channel messages mention nobody: the author's run and the goal are read only for a wake.
  if (targets.size === 0) return [];
  const authorRun = author === null ? null : runningRunOf(db, author);
  const probe = probeOf(m);
  // The goal the message is about — the sender's run's, the goal channel's, or the one a system DM names —
  // so the run it wakes is gated and charged against that goal's budget.
  const goalId =
    authorRun?.goalId ??
    goalIdOfChannel(db, channel.channelId) ??
    (typeof m.metadata?.goal_id === 'number' ? m.metadata.goal_id : null);
  return [...targets].map((agentId) => ({
    agentId,
    source: probe ? 'probe' : 'message_received',
    goalId,
    // A probe's DM is shown through its prompt, under its creator's name, not as a message from `system`.
    ...(probe ? { messageIds: [], prompt: probe.prompt } : { messageIds: [m.messageId] }),
    depth: authorRun ? authorRun.depth + 1 : 0,
    by: probe?.by ?? m.from,
  }));
}

/**
 * A probe's envelope: posted by Colony itself (an agent's DM may carry any metadata, so only `system`'s
 * counts) with the probe and its creator in the metadata (actions/probes/trigger.ts).
 */
function probeOf(m: MessageFact): { by: string; prompt: string } | null {
  const d = m.metadata;
  if (m.from !== 'system' || typeof d?.probe_id !== 'string') return null;
  const by = typeof d.probe_by === 'string' ? d.probe_by : 'system';
  const name = typeof d.probe_by_name === 'string' ? d.probe_by_name : by;
  const creator = { name, kind: senderKind(by) };
  return { by, prompt: probeWakePrompt({ messageId: m.messageId, probeId: d.probe_id, creator, envelope: m.body }) };
}

/** The run of the message's author that is running now, if the author is an agent (its session gets the message). */
export function authorRunOf(db: Database, m: MessageFact): { run: RunRow; channelName: string } | null {
  const author = agentIdOf(m.from);
  const run = author === null ? null : runningRunOf(db, author);
  return run ? { run, channelName: getChannel(db, m.channelId)?.name ?? `channel ${m.channelId}` } : null;
}

const agentIdOf = (key: string): number | null =>
  key.startsWith('agent-') ? Number(key.slice('agent-'.length)) : null;
