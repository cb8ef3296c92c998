import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';

/**
 * Counts across projections for project_get's stats and system_health (live names). A query may read
 * several projections' tables; a projection's apply never does. A project's agents are those whose
 * `agent_runtime.project_id` is the project (AgentProjectSet), its tasks those whose `tasks.project_id` is.
 */
export interface ProjectStats {
  agents: number;
  active: number;
  sessions: number;
  tasks: Record<string, number>;
}
export interface TenantCounts {
  projects: number;
  goals: Record<string, number>;
  tasks: Record<string, number>;
  agents: Record<string, number>;
}

const byStatus = (rows: unknown[]): Record<string, number> =>
  Object.fromEntries((rows as { status: string; n: number }[]).map((r) => [r.status, r.n]));

/**
 * "active" is Colony's `executing` runtime status: xylocopa counted STARTING/RUNNING/WAITING, two of which
 * it never set. Sessions: the project's agents that have one (xylocopa counted
 * agents with a session_id), i.e. whose runtime has a last session.
 */
export function projectStats(db: Database, projectId: number): ProjectStats {
  const agents = prepared(
    db,
    `SELECT count(*) AS agents, coalesce(sum(status = 'executing'), 0) AS active,
    coalesce(sum(last_session_id IS NOT NULL), 0) AS sessions FROM agent_runtime WHERE project_id = ?`,
  ).get(projectId) as Omit<ProjectStats, 'tasks'>;
  const tasks = byStatus(
    prepared(db, 'SELECT status, count(*) AS n FROM tasks WHERE project_id = ? GROUP BY status').all(projectId),
  );
  return { ...agents, tasks };
}

/**
 * What system_health counts for one tenant: active projects, goals and tasks by status, agents by runtime
 * status (no runtime row yet: idle). A task is the tenant's when it says so or its goal is the tenant's.
 */
export function tenantCounts(db: Database, tenant: number): TenantCounts {
  return {
    projects: (
      prepared(db, 'SELECT count(*) AS n FROM projects WHERE owner_id = ? AND archived = 0').get(tenant) as {
        n: number;
      }
    ).n,
    goals: byStatus(
      prepared(db, 'SELECT status, count(*) AS n FROM goals WHERE owner_id = ? GROUP BY status').all(tenant),
    ),
    tasks: byStatus(
      prepared(
        db,
        `SELECT t.status, count(*) AS n FROM tasks t LEFT JOIN goals g ON g.goal_id = t.goal_id
      WHERE coalesce(t.owner_id, g.owner_id) = ? GROUP BY t.status`,
      ).all(tenant),
    ),
    agents: byStatus(
      prepared(
        db,
        `SELECT coalesce(rt.status, 'idle') AS status, count(*) AS n FROM agents a
      LEFT JOIN agent_runtime rt ON rt.agent_id = a.agent_id WHERE a.owner_id = ? GROUP BY 1`,
      ).all(tenant),
    ),
  };
}
