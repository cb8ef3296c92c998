import { XYLOCOPA_STATUS } from '../events/task-status.js';
import type { TaskRow } from './task-queries.js';

/**
 * A goal's task tree as its snapshot shows it (`tasks_tree`): each task a node in the wire's snake_case,
 * with its own spend and the rollup of its subtree.
 */
export interface TaskNode {
  id: number;
  parent_task_id: number | null;
  depth: number;
  title: string;
  description: string;
  acceptance_criteria: string;
  ancestry: { id: number; title: string; acceptance_criteria?: string }[];
  billing_code: string;
  status: string;
  xylocopa_status: string;
  assignee: { id: number; name: string } | null;
  lease_expires_at: string | null;
  verifier_config: unknown;
  heartbeat_config: unknown;
  budget_tokens: number | null;
  budget_dollars_cents: number | null;
  spent_tokens: number;
  spent_dollars_cents: number;
  rollup: { tokens: number; dollars_cents: number; task_count: number };
  summary: string | null;
  artifact_message_ids: number[];
  verdict: string | null;
  verified_by: string | null;
  failure_reason: string | null;
  verifier_output: string | null;
  /** Rejected hand-ins of its current attempt. */
  rejections: number;
  created_at: string;
  claimed_at: string | null;
  completed_at: string | null;
  /** The tasks of the goal it waits on, each with its status now: claimable once every one is done. */
  blocked_by: { id: number; status: string; done: boolean }[];
  children: TaskNode[];
}

/** The forest of a goal's tasks with each node's subtree rollup (children sum into parents). */
export function taskTree(tasks: TaskRow[]): TaskNode[] {
  const nodes = new Map<number, TaskNode>();
  for (const t of tasks) nodes.set(t.taskId, node(t));
  // A task's blockers are of its own goal: their statuses are in this list.
  for (const t of tasks)
    for (const id of t.blockedBy) {
      const status = nodes.get(id)?.status ?? 'unknown';
      nodes.get(t.taskId)!.blocked_by.push({ id, status, done: status === 'done' });
    }
  const roots: TaskNode[] = [];
  for (const t of tasks) {
    const parent = t.parentId === null ? undefined : nodes.get(t.parentId);
    (parent ? parent.children : roots).push(nodes.get(t.taskId)!);
  }
  const sum = (n: TaskNode): TaskNode['rollup'] => {
    for (const c of n.children) {
      const r = sum(c);
      n.rollup = {
        tokens: n.rollup.tokens + r.tokens,
        dollars_cents: n.rollup.dollars_cents + r.dollars_cents,
        task_count: n.rollup.task_count + r.task_count,
      };
    }
    return n.rollup;
  };
  roots.forEach(sum);
  return roots;
}

function node(t: TaskRow): TaskNode {
  return {
    id: t.taskId,
    parent_task_id: t.parentId,
    depth: t.depth,
    title: t.title,
    description: t.description,
    acceptance_criteria: t.acceptanceCriteria,
    ancestry: t.ancestry,
    billing_code: t.billingCode,
    status: t.status,
    xylocopa_status: XYLOCOPA_STATUS[t.status],
    assignee: t.assigneeAgentId === null ? null : { id: t.assigneeAgentId, name: t.assigneeName! },
    lease_expires_at: t.leaseExpiresAt,
    verifier_config: t.verifier,
    heartbeat_config: t.heartbeat,
    budget_tokens: t.budgetTokens,
    budget_dollars_cents: t.budgetCents,
    spent_tokens: t.spentTokens,
    spent_dollars_cents: t.spentCents,
    rollup: { tokens: t.spentTokens, dollars_cents: t.spentCents, task_count: 1 },
    summary: t.summary,
    artifact_message_ids: t.artifactMessageIds,
    verdict: t.verdict,
    verified_by: t.verifiedBy,
    failure_reason: t.failureReason,
    verifier_output: t.verifierOutput,
    rejections: t.rejections,
    created_at: t.createdAt,
    claimed_at: t.claimedAt,
    completed_at: t.completedAt,
    blocked_by: [],
    children: [],
  };
}
