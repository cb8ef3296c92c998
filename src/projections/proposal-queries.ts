import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';

/** Reads over the proposals projection (live names): task-tree and agent proposals. */
export interface ProposalRow {
  proposalId: number;
  kind: 'task_tree' | 'agent';
  goalId: number;
  ownerId: number;
  proposerKey: string;
  proposerName: string;
  reasoning: string;
  tree: unknown;
  taskCount: number;
  messageId: number;
  channelId: number;
  status: 'pending' | 'approved' | 'rejected';
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  createdAt: string;
  parentTaskId: number | null;
  agentId: number | null;
}
const PROPOSAL = `SELECT proposal_id AS proposalId, kind, goal_id AS goalId, owner_id AS ownerId, proposer_key AS proposerKey,
  proposer_name AS proposerName, reasoning, tree, task_count AS taskCount, message_id AS messageId, channel_id AS channelId, status,
  decided_by AS decidedBy, decided_at AS decidedAt, reason, created_at AS createdAt, parent_task_id AS parentTaskId, agent_id AS agentId FROM proposals`;
const toProposal = (r: Record<string, unknown> | undefined): ProposalRow | null =>
  r ? ({ ...r, tree: JSON.parse(r.tree as string) } as ProposalRow) : null;
export const getProposal = (db: Database, id: number): ProposalRow | null =>
  toProposal(prepared(db, `${PROPOSAL} WHERE proposal_id = ?`).get(id) as never);
export const proposalByMessage = (db: Database, messageId: number): ProposalRow | null =>
  toProposal(prepared(db, `${PROPOSAL} WHERE message_id = ?`).get(messageId) as never);
export const pendingTreeProposal = (db: Database, goalId: number): ProposalRow | null =>
  toProposal(
    prepared(db, `${PROPOSAL} WHERE goal_id = ? AND kind = 'task_tree' AND status = 'pending'`).get(goalId) as never,
  );
export const proposalsOfGoal = (db: Database, goalId: number): ProposalRow[] =>
  (prepared(db, `${PROPOSAL} WHERE goal_id = ? ORDER BY proposal_id`).all(goalId) as Record<string, unknown>[]).map(
    (r) => toProposal(r)!,
  );
/** The tenant's proposals in one status, newest first (the console's approvals page, `colony proposals list`). */
export const proposalsOf = (
  db: Database,
  ownerId: number,
  status: ProposalRow['status'],
  limit: number,
): ProposalRow[] =>
  (
    prepared(db, `${PROPOSAL} WHERE owner_id = ? AND status = ? ORDER BY proposal_id DESC LIMIT ?`).all(
      ownerId,
      status,
      limit,
    ) as Record<string, unknown>[]
  ).map((r) => toProposal(r)!);
