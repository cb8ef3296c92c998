import type { Database } from 'better-sqlite3';
import { channelStream } from '../events/channels.js';
import { goalStream } from '../events/goals.js';
import { agentStream, userStream } from '../events/principals.js';
import { proposalStream } from '../events/proposals.js';
import { runStream } from '../events/runs.js';
import { taskStream } from '../events/tasks.js';
import { getGoal } from '../projections/goal-queries.js';
import { ancestorsOf } from '../projections/principal-queries.js';
import { proposalsOfGoal } from '../projections/proposal-queries.js';
import { runsOfGoal } from '../projections/run-queries.js';
import { tasksOfGoal } from '../projections/task-queries.js';

/**
 * The streams of a goal's history: the goal, its channel, its tasks, its proposals, its runs;
 * the agents that worked on it — its coordinator, the agents spawned for it, every assignee — with their
 * spawn ancestors, and its owner. That is what the goal snapshot is made of, so replaying exactly these
 * streams gives the snapshot again (`colony verify-bundle` checks that, and checks that this selection,
 * run on the replayed state, names exactly the bundle's streams: a stream of another goal slipped in is
 * caught). Sorted by the UTF-8 bytes of the stream id, the order of a checkpoint's heads.
 */
export function goalStreams(db: Database, goalId: number): string[] {
  const goal = getGoal(db, goalId);
  if (!goal) return [];
  const tasks = tasksOfGoal(db, goalId);
  const proposals = proposalsOfGoal(db, goalId);
  const agents = new Set<number>([goal.coordinatorAgentId]);
  for (const t of tasks) if (t.assigneeAgentId !== null) agents.add(t.assigneeAgentId);
  for (const p of proposals)
    if (p.kind === 'agent' && p.agentId !== null && p.status === 'approved') agents.add(p.agentId);
  for (const a of [...agents]) for (const up of ancestorsOf(db, a)) agents.add(up);
  const streams = new Set<string>([
    goalStream(goalId),
    channelStream(goal.channelId),
    userStream(goal.ownerId),
    ...tasks.map((t) => taskStream(t.taskId)),
    ...proposals.map((p) => proposalStream(p.proposalId)),
    ...runsOfGoal(db, goalId).map((r) => runStream(r.runId)),
    ...[...agents].map(agentStream),
  ]);
  return [...streams].sort(byUtf8);
}

export const byUtf8 = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
