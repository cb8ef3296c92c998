import { ToolError, type Colony } from './colony-client.js';
import type { Assignment, AssignmentMetadata } from './shared.js';

/**
 * What the agents read about a goal (get_goal) and how a specialist turns the coordinator's DMs into
 * claims. Stateless by design: each run reads its assignments again from the inbox, as a fresh LLM
 * session would.
 */
export interface TaskNode {
  id: number;
  title: string;
  status: string;
  billing_code: string;
  summary: string | null;
  artifact_message_ids: number[];
  failure_reason: string | null;
  verdict: string | null;
  assignee: { id: number; name: string } | null;
  children: TaskNode[];
}
export interface GoalSnapshot {
  goal: { id: number; slug: string; status: string; title: string; channel: string };
  tasks_tree: TaskNode[];
}

export const CLOSED_GOAL = new Set(['completed', 'stuck', 'cancelled']);
export const FINISHED_TASK = new Set(['done', 'failed', 'timeout', 'cancelled']);

export const goalSnapshot = (colony: Colony, goalId: number): Promise<GoalSnapshot> =>
  colony.call<GoalSnapshot>('get_goal', { goal_id: goalId });

export function allTasks(snapshot: GoalSnapshot): TaskNode[] {
  const out: TaskNode[] = [];
  const walk = (n: TaskNode) => {
    out.push(n);
    n.children.forEach(walk);
  };
  snapshot.tasks_tree.forEach(walk);
  return out;
}

export const leavesOf = (snapshot: GoalSnapshot): TaskNode[] =>
  allTasks(snapshot).filter((t) => t.children.length === 0);

interface InboxMessage {
  message_id: number;
  from: string;
  body: string;
  metadata: Record<string, unknown> | null;
}

/** Every assignment the coordinator has sent this agent (read or not), grouped by goal. */
export async function assignments(colony: Colony, coordinator: string): Promise<AssignmentMetadata[]> {
  // Peek at everything, then mark the unread ones read, so a later run does not see them as news.
  const { messages } = await colony.call<{ messages: InboxMessage[] }>('read_inbox', {
    include_read: true,
    from_agent: coordinator,
    limit: 200,
  });
  await colony.call('read_inbox', { mark_read: true, from_agent: coordinator, limit: 200 });
  return messages
    .map((m) => m.metadata)
    .filter((m): m is Record<string, unknown> => m?.kind === 'assignment') as unknown as AssignmentMetadata[];
}

/**
 * Claims each assigned task that is open (approved, nobody holds it) and whose `after` task is done.
 * Returns the names claimed. Colony wakes this agent again with each claimed task's context.
 */
export async function claimReady(colony: Colony, coordinator: string): Promise<string[]> {
  const claimed: string[] = [];
  for (const a of await assignments(colony, coordinator)) {
    const tasks = allTasks(await goalSnapshot(colony, a.goal_id));
    const status = (id: number) => tasks.find((t) => t.id === id)?.status;
    for (const t of a.tasks) {
      if (status(t.task_id) !== 'approved' || (t.after !== undefined && status(t.after) !== 'done')) continue;
      if (await claim(colony, t)) claimed.push(`${t.name} (#${t.task_id})`);
    }
  }
  return claimed;
}

async function claim(colony: Colony, t: Assignment): Promise<boolean> {
  try {
    await colony.call('claim_task', { task_id: t.task_id });
    return true;
  } catch (e) {
    if (e instanceof ToolError && e.code === 'ErrAlreadyClaimed') return false;
    throw e;
  }
}

/** Posts an artifact to the goal channel; its message id (complete_task names it). */
export async function postArtifact(
  colony: Colony,
  channel: string,
  subject: string,
  body: string,
  metadata: Record<string, unknown>,
): Promise<number> {
  const sent = await colony.call<{ message_id: number }>('send_message', {
    channel,
    subject,
    body,
    metadata: JSON.stringify({ kind: 'artifact', ...metadata }),
  });
  return sent.message_id;
}

/** Hands in a task: usage of the work itself (report_usage), then complete_task with the artifacts. */
export async function handIn(
  colony: Colony,
  taskId: number,
  work: { tokens: number; note: string },
  summary: string,
  artifacts: number[],
): Promise<string> {
  await colony.call('report_usage', {
    task_id: taskId,
    tokens: work.tokens,
    cost_cents: Math.max(1, Math.ceil(work.tokens / 10_000)),
    note: work.note,
  });
  const done = await colony.call<{ status: string }>('complete_task', {
    task_id: taskId,
    summary,
    artifact_message_ids: artifacts,
  });
  return done.status;
}
