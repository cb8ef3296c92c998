import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { WebappEvent, WebappKind, WebappRetireReason } from '../events/webapps.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * Web apps as a read table (xylocopa's `webapps`): one row per registration, keyed on
 * (owner, project, kind, target). Rows are never deleted (xylocopa's append-only catalog); a retired
 * port app keeps its row with `retired_at` set until it is presented again. The table is the
 * allow-list of what `/apps/<id>/` serves.
 */
type T = 'webapps';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.webapps}" (n, app_id, owner_id, project_id, kind, target, title, description, created_by_agent, agent_id,
    message_id, created_at, last_presented_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  represented: `UPDATE "${t.webapps}" SET title = CASE WHEN @title = '' THEN title ELSE @title END,
    description = CASE WHEN @description = '' THEN description ELSE @description END, agent_id = @agent, message_id = @message,
    last_presented_at = @at, retired_at = NULL, retired_reason = NULL WHERE app_id = @app`,
  retired: `UPDATE "${t.webapps}" SET retired_at = ?, retired_reason = ? WHERE app_id = ?`,
}));

export const webappsProjection: Projection<WebappEvent, T> = {
  name: 'webapps',
  version: 1,
  handles: ['WebappPresented', 'WebappRepresented', 'WebappRetired'],
  tables: ['webapps'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.webapps}" (
        n INTEGER PRIMARY KEY, app_id TEXT NOT NULL UNIQUE, owner_id INTEGER NOT NULL, project_id INTEGER NOT NULL, kind TEXT NOT NULL,
        target TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL, created_by_agent INTEGER NOT NULL, agent_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL, created_at TEXT NOT NULL, last_presented_at TEXT NOT NULL, retired_at TEXT, retired_reason TEXT,
        UNIQUE (owner_id, project_id, kind, target));
      CREATE INDEX IF NOT EXISTS "${t.webapps}_by_presenter" ON "${t.webapps}" (agent_id, kind, retired_at);
      CREATE INDEX IF NOT EXISTS "${t.webapps}_by_owner" ON "${t.webapps}" (owner_id, last_presented_at);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'WebappPresented': {
        const d = e.data;
        yield run(
          q.insert,
          d.n,
          d.appId,
          d.ownerId,
          d.projectId,
          d.kind,
          d.target,
          d.title,
          d.description,
          d.agentId,
          d.agentId,
          d.messageId,
          e.recordedAt,
          e.recordedAt,
        );
        return;
      }
      case 'WebappRepresented': {
        const d = e.data;
        yield run(q.represented, {
          title: d.title,
          description: d.description,
          agent: d.agentId,
          message: d.messageId,
          at: e.recordedAt,
          app: d.appId,
        });
        return;
      }
      case 'WebappRetired':
        yield run(q.retired, e.recordedAt, e.data.reason, e.data.appId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export interface WebappRow {
  appId: string;
  n: number;
  ownerId: number;
  projectId: number;
  projectName: string;
  kind: WebappKind;
  target: string;
  title: string;
  description: string;
  createdByAgent: number;
  agentId: number;
  messageId: number;
  createdAt: string;
  lastPresentedAt: string;
  retiredAt: string | null;
  retiredReason: WebappRetireReason | null;
}

// Queries join the projects table for the name (reads may span projections; apply may not).
const ROW = `SELECT w.app_id AS appId, w.n, w.owner_id AS ownerId, w.project_id AS projectId, p.name AS projectName, w.kind, w.target, w.title,
  w.description, w.created_by_agent AS createdByAgent, w.agent_id AS agentId, w.message_id AS messageId, w.created_at AS createdAt,
  w.last_presented_at AS lastPresentedAt, w.retired_at AS retiredAt, w.retired_reason AS retiredReason
  FROM webapps w JOIN projects p ON p.project_id = w.project_id`;

export const getWebapp = (db: Database, appId: string): WebappRow | null =>
  (prepared(db, `${ROW} WHERE w.app_id = ?`).get(appId) as WebappRow | undefined) ?? null;

export interface WebappKey {
  ownerId: number;
  projectId: number;
  kind: WebappKind;
  target: string;
}
export const webappByKey = (db: Database, k: WebappKey): WebappRow | null =>
  (prepared(
    db,
    `${ROW} WHERE w.owner_id = @ownerId AND w.project_id = @projectId AND w.kind = @kind AND w.target = @target`,
  ).get(k) as WebappRow | undefined) ?? null;

/** The tenant's registrations (of one project when given), most recently presented first. */
export const listWebapps = (db: Database, ownerId: number, projectId: number | null): WebappRow[] =>
  prepared(
    db,
    `${ROW} WHERE w.owner_id = @owner AND (@project IS NULL OR w.project_id = @project) ORDER BY w.last_presented_at DESC, w.n DESC`,
  ).all({ owner: ownerId, project: projectId }) as WebappRow[];

/** The live port apps this agent presented last: they retire when it stops. */
export const livePortAppsOf = (db: Database, agentId: number): WebappRow[] =>
  prepared(db, `${ROW} WHERE w.agent_id = ? AND w.kind = 'port' AND w.retired_at IS NULL ORDER BY w.n`).all(
    agentId,
  ) as WebappRow[];
