import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { RequestStatus, ResourceEvent, ResourceType } from '../events/resources.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * Resource requests as a read table (SynapBus's `resource_requests`), with the secret that fulfilled
 * each, or the owner's reason for refusing it (version 3: so `colony requests list` can show why).
 */
type T = 'resource_requests';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.resource_requests}" (request_id, owner_id, requester_agent_id, requester_name, task_id, goal_id, name,
    resource_type, reason, status, message_id, channel_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
  fulfil: `UPDATE "${t.resource_requests}" SET status = 'fulfilled', fulfilled_at = ?, fulfilled_by_secret = ?, fulfilled_scope = ? WHERE request_id = ?`,
  reject: `UPDATE "${t.resource_requests}" SET status = 'rejected', rejected_at = ?, rejection_reason = ? WHERE request_id = ?`,
}));

export const resourcesProjection: Projection<ResourceEvent, T> = {
  name: 'resources',
  version: 3,
  handles: ['ResourceRequested', 'ResourceRequestFulfilled', 'ResourceRequestRejected'],
  tables: ['resource_requests'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.resource_requests}" (
        request_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, requester_agent_id INTEGER NOT NULL, requester_name TEXT NOT NULL,
        task_id INTEGER NOT NULL, goal_id INTEGER, name TEXT NOT NULL, resource_type TEXT NOT NULL, reason TEXT NOT NULL,
        status TEXT NOT NULL, message_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, created_at TEXT NOT NULL, fulfilled_at TEXT,
        fulfilled_by_secret INTEGER, fulfilled_scope TEXT, rejected_at TEXT, rejection_reason TEXT);
      CREATE INDEX IF NOT EXISTS "${t.resource_requests}_pending" ON "${t.resource_requests}" (owner_id, name) WHERE status = 'pending';
      CREATE INDEX IF NOT EXISTS "${t.resource_requests}_by_task" ON "${t.resource_requests}" (task_id);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'ResourceRequested': {
        const d = e.data;
        yield run(
          q.insert,
          d.requestId,
          d.ownerId,
          d.requesterAgentId,
          d.requesterName,
          d.taskId,
          d.goalId,
          d.name,
          d.resourceType,
          d.reason,
          d.messageId,
          d.channelId,
          e.recordedAt,
        );
        return;
      }
      case 'ResourceRequestFulfilled':
        yield run(q.fulfil, e.recordedAt, e.data.secretId, e.data.scope, e.data.requestId);
        return;
      case 'ResourceRequestRejected':
        yield run(q.reject, e.recordedAt, e.data.reason, e.data.requestId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export interface ResourceRequestRow {
  requestId: number;
  ownerId: number;
  requesterAgentId: number;
  requesterName: string;
  taskId: number;
  goalId: number | null;
  name: string;
  resourceType: ResourceType;
  reason: string;
  status: RequestStatus;
  messageId: number;
  channelId: number;
  createdAt: string;
  fulfilledAt: string | null;
  fulfilledBySecret: number | null;
  fulfilledScope: string | null;
  rejectedAt: string | null;
  rejectionReason: string | null;
}

const ROW = `SELECT request_id AS requestId, owner_id AS ownerId, requester_agent_id AS requesterAgentId, requester_name AS requesterName,
  task_id AS taskId, goal_id AS goalId, name, resource_type AS resourceType, reason, status, message_id AS messageId, channel_id AS channelId,
  created_at AS createdAt, fulfilled_at AS fulfilledAt, fulfilled_by_secret AS fulfilledBySecret, fulfilled_scope AS fulfilledScope,
  rejected_at AS rejectedAt, rejection_reason AS rejectionReason FROM resource_requests`;

export const getResourceRequest = (db: Database, requestId: number): ResourceRequestRow | null =>
  (prepared(db, `${ROW} WHERE request_id = ?`).get(requestId) as ResourceRequestRow | undefined) ?? null;

/** The owner's pending requests for `name`, oldest first. */
export const pendingRequests = (db: Database, ownerId: number, name: string): ResourceRequestRow[] =>
  prepared(db, `${ROW} WHERE owner_id = ? AND name = ? AND status = 'pending' ORDER BY request_id`).all(
    ownerId,
    name,
  ) as ResourceRequestRow[];

/** The agent's pending request for `name` on a task, if it already asked. */
export const pendingRequestOf = (
  db: Database,
  agentId: number,
  taskId: number,
  name: string,
): ResourceRequestRow | null =>
  (prepared(
    db,
    `${ROW} WHERE requester_agent_id = ? AND task_id = ? AND name = ? AND status = 'pending' ORDER BY request_id LIMIT 1`,
  ).get(agentId, taskId, name) as ResourceRequestRow | undefined) ?? null;

/** The owner's requests in one status, newest first (the console's list and `colony requests list`). */
export const requestsOf = (db: Database, ownerId: number, status: RequestStatus, limit: number): ResourceRequestRow[] =>
  prepared(db, `${ROW} WHERE owner_id = ? AND status = ? ORDER BY request_id DESC LIMIT ?`).all(
    ownerId,
    status,
    limit,
  ) as ResourceRequestRow[];
