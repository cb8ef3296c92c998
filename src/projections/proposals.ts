import type { ProposalEvent } from '../events/proposals.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/** Proposals waiting for (or decided by) the owner, findable by their `#approvals` message. */
export type T = 'proposals';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.proposals}" (proposal_id, kind, goal_id, owner_id, proposer_key, proposer_name, reasoning, tree,
    task_count, message_id, channel_id, status, created_at, parent_task_id, agent_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
  decide: `UPDATE "${t.proposals}" SET status = ?, decided_by = ?, decided_at = ?, reason = ?, auto = ?, task_ids = ?, agent_id = ? WHERE proposal_id = ?`,
}));

export const proposalsProjection: Projection<ProposalEvent, T> = {
  name: 'proposals',
  version: 2,
  handles: ['TaskTreeProposed', 'AgentProposed', 'ProposalApproved', 'ProposalRejected'],
  tables: ['proposals'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.proposals}" (
        proposal_id INTEGER PRIMARY KEY, kind TEXT NOT NULL, goal_id INTEGER NOT NULL, owner_id INTEGER NOT NULL,
        proposer_key TEXT NOT NULL, proposer_name TEXT NOT NULL, reasoning TEXT NOT NULL, tree TEXT NOT NULL, task_count INTEGER NOT NULL,
        message_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, status TEXT NOT NULL, decided_by TEXT, decided_at TEXT, reason TEXT,
        auto INTEGER, task_ids TEXT, created_at TEXT NOT NULL, parent_task_id INTEGER, agent_name TEXT, agent_id INTEGER);
      CREATE INDEX IF NOT EXISTS "${t.proposals}_by_agent_name" ON "${t.proposals}" (owner_id, agent_name, status);
      CREATE UNIQUE INDEX IF NOT EXISTS "${t.proposals}_by_message" ON "${t.proposals}" (message_id);
      CREATE INDEX IF NOT EXISTS "${t.proposals}_by_goal" ON "${t.proposals}" (goal_id, status);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'TaskTreeProposed': {
        const p = e.data;
        yield run(
          q.insert,
          p.proposalId,
          'task_tree',
          p.goalId,
          p.ownerId,
          p.proposer.key,
          p.proposer.name,
          p.reasoning,
          JSON.stringify(p.tree),
          p.taskCount,
          p.messageId,
          p.channelId,
          e.recordedAt,
          null,
          null,
        );
        return;
      }
      case 'AgentProposed': {
        const p = e.data;
        yield run(
          q.insert,
          p.proposalId,
          'agent',
          p.goalId,
          p.ownerId,
          p.proposer.key,
          p.proposer.name,
          p.reason,
          JSON.stringify(p.agent),
          0,
          p.messageId,
          p.channelId,
          e.recordedAt,
          p.parentTaskId,
          p.agent.name,
        );
        return;
      }
      case 'ProposalApproved':
        yield run(
          q.decide,
          'approved',
          e.data.by.name,
          e.recordedAt,
          null,
          e.data.auto ? 1 : 0,
          JSON.stringify(e.data.taskIds),
          e.data.agentId ?? null,
          e.data.proposalId,
        );
        return;
      case 'ProposalRejected':
        yield run(q.decide, 'rejected', e.data.by.name, e.recordedAt, e.data.reason, 0, null, null, e.data.proposalId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};
