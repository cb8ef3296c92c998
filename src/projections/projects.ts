import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { ProjectEvent } from '../events/projects.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * Projects as a read table (xylocopa's `projects`), one row per project, names unique per
 * owner. Archived rows stay (soft delete): the name stays taken and project_create re-activates it.
 */
type T = 'projects';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.projects}" (project_id, owner_id, name, path, git_remote, description, archived, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)`,
  reactivated: `UPDATE "${t.projects}" SET archived = 0, git_remote = ?, description = ?, updated_at = ? WHERE project_id = ?`,
  archived: `UPDATE "${t.projects}" SET archived = 1, updated_at = ? WHERE project_id = ?`,
}));

export const projectsProjection: Projection<ProjectEvent, T> = {
  name: 'projects',
  version: 1,
  handles: ['ProjectCreated', 'ProjectReactivated', 'ProjectArchived'],
  tables: ['projects'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.projects}" (
        project_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL, git_remote TEXT, description TEXT,
        archived INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (owner_id, name));
      CREATE INDEX IF NOT EXISTS "${t.projects}_by_path" ON "${t.projects}" (archived, path);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    const at = e.recordedAt;
    switch (e.type) {
      case 'ProjectCreated': {
        const d = e.data;
        yield run(q.insert, d.projectId, d.ownerId, d.name, d.path, d.gitRemote, d.description, at, at);
        return;
      }
      case 'ProjectReactivated':
        yield run(q.reactivated, e.data.gitRemote, e.data.description, at, e.data.projectId);
        return;
      case 'ProjectArchived':
        yield run(q.archived, at, e.data.projectId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export interface ProjectRow {
  projectId: number;
  ownerId: number;
  name: string;
  path: string;
  gitRemote: string | null;
  description: string | null;
  archived: boolean;
  createdAt: string;
  updatedAt: string;
}

const ROW = `SELECT project_id AS projectId, owner_id AS ownerId, name, path, git_remote AS gitRemote, description, archived,
  created_at AS createdAt, updated_at AS updatedAt FROM projects`;
const toRow = (r: Record<string, unknown> | undefined): ProjectRow | null =>
  r ? ({ ...r, archived: r.archived === 1 } as unknown as ProjectRow) : null;

export const getProject = (db: Database, projectId: number): ProjectRow | null =>
  toRow(prepared(db, `${ROW} WHERE project_id = ?`).get(projectId) as Record<string, unknown> | undefined);

/** Archived ones included: the name stays taken. Names are case-sensitive, as xylocopa's primary key is. */
export const getProjectByName = (db: Database, ownerId: number, name: string): ProjectRow | null =>
  toRow(
    prepared(db, `${ROW} WHERE owner_id = ? AND name = ?`).get(ownerId, name) as Record<string, unknown> | undefined,
  );

/** xylocopa's order: by name; with the archived ones, active first, then by name. */
export function listProjects(db: Database, ownerId: number, includeArchived: boolean): ProjectRow[] {
  const rows = includeArchived
    ? prepared(db, `${ROW} WHERE owner_id = ? ORDER BY archived, name`).all(ownerId)
    : prepared(db, `${ROW} WHERE owner_id = ? AND archived = 0 ORDER BY name`).all(ownerId);
  return rows.map((r) => toRow(r as Record<string, unknown>)!);
}

/** Every active project's path, of all tenants: each is an allowed root of the path policy. */
export const activeProjectPaths = (db: Database): string[] =>
  (prepared(db, 'SELECT DISTINCT path FROM projects WHERE archived = 0 ORDER BY path').all() as { path: string }[]).map(
    (r) => r.path,
  );

/**
 * xylocopa's cwd inference: the project whose path is `cwd` or an ancestor of it, the longest path winning
 * (a project nested in another's tree is the more specific one). Archived projects do not count — unlike
 * xylocopa's: work must not land in a project its owner has put away.
 */
export function projectForPath(db: Database, ownerId: number, cwd: string): ProjectRow | null {
  const dir = cwd.length > 1 ? cwd.replace(/\/+$/, '') : cwd;
  return toRow(
    prepared(
      db,
      `${ROW} WHERE owner_id = @owner AND archived = 0
    AND (path = @dir OR substr(@dir, 1, length(rtrim(path, '/')) + 1) = rtrim(path, '/') || '/')
    ORDER BY length(path) DESC LIMIT 1`,
    ).get({ owner: ownerId, dir }) as Record<string, unknown> | undefined,
  );
}
