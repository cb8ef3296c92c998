import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { AgentRuntimeRow } from './run-queries.js';
import type { Runtime } from '../events/principals.js';
import { RUNTIME_SQL } from './principal-queries.js';

/**
 * Reads behind xylocopa's session and agent tools and codomyrmex's get_agent_memory, over the runs,
 * session_messages, agent_runtime and agents tables. A session is a run's
 * session (12 hex); an agent's current session is its runtime's last_session_id. Every read is scoped
 * to one tenant (the owner whose agents and runs they are).
 */
export type RuntimeStatus = AgentRuntimeRow['status'];

export interface AgentView {
  agentId: number;
  name: string;
  ownerId: number;
  model: string;
  parentId: number | null;
  createdAt: string;
  command: string | null;
  /** What Colony launches it with (principal-queries.ts RUNTIME_SQL); null: an outside client holds it. */
  runtime: Runtime | null;
  status: RuntimeStatus;
  lastSessionId: string | null;
  lastRunId: number | null;
  lastMessageAt: string | null;
  preview: string | null;
  /** The task of the agent's latest started run, if it had one. */
  taskId: number | null;
  /** The project it works in (agent_runtime.project_id), by name. */
  project: string | null;
}

export interface SessionView {
  runId: number;
  sessionId: string;
  agentId: number;
  agentName: string;
  status: RuntimeStatus;
  taskId: number | null;
  project: string | null;
  /** When the session last had a message, else when its run started. */
  lastActivityAt: string | null;
  preview: string | null;
}

/**
 * Whose transcripts a reader may see: `null` — all of the tenant's (the owner); else these
 * agents' only (an agent: itself and the agents it spawned, at any depth). Peers never read each other's.
 */
export type Readable = readonly number[] | null;
const READABLE = `(@readable IS NULL OR a.agent_id IN (SELECT value FROM json_each(@readable)))`;
const readableParam = (r: Readable): string | null => (r === null ? null : JSON.stringify(r));

/** A lookup's answer: the agent and the session to read (the one named, else the agent's latest; null if it never ran). */
export interface Lookup {
  agent: AgentView;
  sessionId: string | null;
  runId: number | null;
}

const AGENT = `SELECT a.agent_id AS agentId, a.name, a.owner_id AS ownerId, a.model, a.parent_id AS parentId, a.created_at AS createdAt,
  COALESCE(a.command, u.agent_command) AS command, ${RUNTIME_SQL} AS runtime,
  COALESCE(rt.status, 'idle') AS status, rt.last_session_id AS lastSessionId, rt.last_run_id AS lastRunId, rt.last_message_at AS lastMessageAt,
  rt.preview, (SELECT r.task_id FROM runs r WHERE r.run_id = rt.last_run_id) AS taskId, p.name AS project
  FROM agents a LEFT JOIN users u ON u.user_id = a.owner_id LEFT JOIN agent_runtime rt ON rt.agent_id = a.agent_id
  LEFT JOIN projects p ON p.project_id = rt.project_id`;
const AGENT_ACTIVITY = 'COALESCE(rt.last_message_at, a.created_at) DESC, a.agent_id DESC';

const SESSION = `SELECT r.run_id AS runId, r.session_id AS sessionId, r.agent_id AS agentId, a.name AS agentName, COALESCE(rt.status, 'idle') AS status,
  r.task_id AS taskId, COALESCE(r.last_message_at, r.started_at) AS lastActivityAt, r.preview, p.name AS project
  FROM runs r JOIN agents a ON a.agent_id = r.agent_id LEFT JOIN agent_runtime rt ON rt.agent_id = r.agent_id
  LEFT JOIN projects p ON p.project_id = rt.project_id`;
const SESSION_ACTIVITY = 'COALESCE(r.last_message_at, r.started_at, r.queued_at) DESC, r.run_id DESC';

/** `text` as a LIKE prefix pattern with its wildcards escaped (xylocopa's passed `%` and `_` through). */
export const likePrefix = (text: string): string => `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Sessions that have started, newest activity first (xylocopa's session_list: a fixed limit of 30); `project`: its agent's project's name. */
export const listSessions = (
  db: Database,
  tenant: number,
  readable: Readable,
  project: string | null = null,
  limit = 30,
): SessionView[] =>
  prepared(
    db,
    `${SESSION} WHERE r.owner_id = @tenant AND r.session_id IS NOT NULL AND r.started_at IS NOT NULL AND (@project IS NULL OR p.name = @project)
    AND ${READABLE} ORDER BY ${SESSION_ACTIVITY} LIMIT @limit`,
  ).all({ tenant, project, limit, readable: readableParam(readable) }) as SessionView[];

export interface AgentFilter {
  status: string | null;
  limit: number;
  project?: string | null;
}

/** The tenant's agents, most recent activity (last message, else creation) first; `status` matches the runtime status case-insensitively. */
export const listAgentViews = (db: Database, tenant: number, f: AgentFilter): AgentView[] =>
  prepared(
    db,
    `${AGENT} WHERE a.owner_id = @tenant AND (@status IS NULL OR UPPER(COALESCE(rt.status, 'idle')) = @status)
    AND (@project IS NULL OR p.name = @project) ORDER BY ${AGENT_ACTIVITY} LIMIT @limit`,
  ).all({
    tenant,
    status: f.status === null ? null : f.status.trim().toUpperCase(),
    project: f.project ?? null,
    limit: f.limit,
  }) as AgentView[];

export const agentView = (db: Database, tenant: number, agentId: number): AgentView | null =>
  (prepared(db, `${AGENT} WHERE a.owner_id = ? AND a.agent_id = ?`).get(tenant, agentId) as AgentView | undefined) ??
  null;

/**
 * xylocopa's `_lookup_agent` on Colony, first match wins: 1) a run's exact session id
 * (a queued run's too: its session exists, with no messages yet), 2) an agent's exact id (the integer as a
 * string) or exact name, 3) a prefix of a started session's id (the one with the latest activity), 4) an
 * agent name prefix (the agent with the latest activity). Prefixes are literal: LIKE wildcards are escaped
 * (the original's were not). An empty identifier matches nothing (as a prefix it would match everything).
 */
export function lookupAgent(
  db: Database,
  tenant: number,
  identifier: string,
  readable: Readable = null,
): Lookup | null {
  if (identifier === '') return null;
  const p = { tenant, readable: readableParam(readable) };
  const exact = sessionByExactId(db, tenant, identifier, readable);
  if (exact) return ofSession(db, tenant, exact);
  const named =
    (/^[0-9]+$/.test(identifier) && Number.isSafeInteger(Number(identifier))
      ? (prepared(db, `${AGENT} WHERE a.owner_id = @tenant AND a.agent_id = @id AND ${READABLE}`).get({
          ...p,
          id: Number(identifier),
        }) as AgentView | undefined)
      : undefined) ??
    (prepared(db, `${AGENT} WHERE a.owner_id = @tenant AND a.name = @name AND ${READABLE}`).get({
      ...p,
      name: identifier,
    }) as AgentView | undefined);
  if (named) return ofAgent(named);
  const prefixed = prepared(
    db,
    `${SESSION} WHERE r.owner_id = @tenant AND r.started_at IS NOT NULL AND r.session_id LIKE @like ESCAPE '\\' AND ${READABLE}
    ORDER BY ${SESSION_ACTIVITY} LIMIT 1`,
  ).get({ ...p, like: likePrefix(identifier) }) as SessionView | undefined;
  if (prefixed) return ofSession(db, tenant, prefixed);
  const byName = prepared(
    db,
    `${AGENT} WHERE a.owner_id = @tenant AND a.name LIKE @like ESCAPE '\\' AND ${READABLE} ORDER BY ${AGENT_ACTIVITY} LIMIT 1`,
  ).get({ ...p, like: likePrefix(identifier) }) as AgentView | undefined;
  return byName ? ofAgent(byName) : null;
}

/**
 * codomyrmex's get_agent_memory takes a session id only: the exact id of any of the tenant's runs
 * (queued ones included: a session with no messages yet), else a prefix shared by exactly one session.
 */
export function findSession(
  db: Database,
  tenant: number,
  identifier: string,
  readable: Readable = null,
): SessionView | null {
  if (identifier === '') return null;
  const exact = sessionByExactId(db, tenant, identifier, readable);
  if (exact) return exact;
  const candidates = prepared(
    db,
    `${SESSION} WHERE r.owner_id = @tenant AND r.session_id LIKE @like ESCAPE '\\' AND ${READABLE} ORDER BY r.run_id LIMIT 2`,
  ).all({ tenant, like: likePrefix(identifier), readable: readableParam(readable) }) as SessionView[];
  return candidates.length === 1 ? candidates[0]! : null;
}

const sessionByExactId = (db: Database, tenant: number, sessionId: string, readable: Readable): SessionView | null =>
  (prepared(db, `${SESSION} WHERE r.owner_id = @tenant AND r.session_id = @sid AND ${READABLE}`).get({
    tenant,
    sid: sessionId,
    readable: readableParam(readable),
  }) as SessionView | undefined) ?? null;

function ofSession(db: Database, tenant: number, s: SessionView): Lookup | null {
  const agent = agentView(db, tenant, s.agentId);
  return agent && { agent, sessionId: s.sessionId, runId: s.runId };
}

const ofAgent = (agent: AgentView): Lookup => ({ agent, sessionId: agent.lastSessionId, runId: agent.lastRunId });
