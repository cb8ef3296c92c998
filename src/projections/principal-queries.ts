import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { all, applySteps, get, type Steps } from '../engine/projection-sql.js';
import { type AgentMcpServer } from '../events/agent-config.js';
import type { ModelRate, Runtime, Tier, TokenScope } from '../events/principals.js';

/** Reads over the principals projection (live names): owners, agents, their tokens, and agents' spawn lineage. */
export interface UserRow {
  userId: number;
  name: string;
  role: 'owner';
  createdAt: string;
  agentCommand: string | null;
  agentRuntime: Runtime | null;
}
export interface AgentRow {
  agentId: number;
  name: string;
  ownerId: number;
  model: string;
  systemPrompt: string;
  toolScope: string[];
  tier: Tier;
  /** What Colony runs for it: its own command, else its team's default (`colony config set agent-command`). */
  command: string | null;
  /** Its own command only (what `agents update --command` set, or its parent's at spawn); null: it follows the team's default. */
  ownCommand: string | null;
  /** What Colony launches it with (RUNTIME_SQL); null: nothing — an outside client holds it. */
  runtime: Runtime | null;
  /** Its own runtime only (`agents create|update --runtime`); null: it follows its command, else the team's. */
  ownRuntime: Runtime | null;
  /** Whether Colony can launch it: a runtime, and for `command` a command line. */
  runnable: boolean;
  parentId: number | null;
  spawnDepth: number;
  status: string;
  quarantined: boolean;
  createdAt: string;
  quarantineReason: string | null;
  quarantinedAt: string | null;
  configHash: string;
  skills: string[];
  mcpServers: AgentMcpServer[];
  subagents: string[];
}
export interface TokenRow {
  tokenId: number;
  principalKind: 'user' | 'agent';
  principalId: number;
  label: string;
  scopes: TokenScope[];
  issuedAt: string;
  revokedAt: string | null;
}

const USER =
  'SELECT user_id AS userId, name, role, created_at AS createdAt, agent_command AS agentCommand, agent_runtime AS agentRuntime FROM users';

/**
 * An agent's runtime, from the most specific word to the least: its own runtime, its own command (a
 * `command` agent), the team's runtime, the team's command. SQL over `agents a` joined with `users u`.
 */
export const RUNTIME_SQL = `COALESCE(a.runtime, CASE WHEN a.command IS NOT NULL THEN 'command' END, u.agent_runtime,
  CASE WHEN u.agent_command IS NOT NULL THEN 'command' END)`;
/** Whether Colony launches the agent: it has a runtime, and a `command` runtime has a line to run. */
export const RUNNABLE_SQL = `(${RUNTIME_SQL} IS NOT NULL AND (${RUNTIME_SQL} <> 'command' OR COALESCE(a.command, u.agent_command) IS NOT NULL))`;
// `a.` everywhere: users joins in for the team's default command, and both tables have a name.
const AGENT = `SELECT a.agent_id AS agentId, a.name, a.owner_id AS ownerId, a.model, a.system_prompt AS systemPrompt, a.tool_scope AS toolScope,
  a.tier, COALESCE(a.command, u.agent_command) AS command, a.command AS ownCommand,
  ${RUNTIME_SQL} AS runtime, a.runtime AS ownRuntime, ${RUNNABLE_SQL} AS runnable, a.parent_id AS parentId, a.spawn_depth AS spawnDepth,
  a.status, a.quarantined, a.created_at AS createdAt, a.quarantine_reason AS quarantineReason, a.quarantined_at AS quarantinedAt,
  a.config_hash AS configHash, a.skills, a.mcp_servers AS mcpServers, a.subagents
  FROM agents a LEFT JOIN users u ON u.user_id = a.owner_id`;
const TOKEN = `SELECT token_id AS tokenId, principal_kind AS principalKind, principal_id AS principalId, label, scopes,
  issued_at AS issuedAt, revoked_at AS revokedAt FROM tokens`;

const toAgent = (r: Record<string, unknown> | undefined): AgentRow | null =>
  r
    ? ({
        ...r,
        toolScope: JSON.parse(r.toolScope as string),
        quarantined: r.quarantined === 1,
        runnable: r.runnable === 1,
        skills: JSON.parse(r.skills as string),
        mcpServers: JSON.parse(r.mcpServers as string),
        subagents: JSON.parse(r.subagents as string),
      } as AgentRow)
    : null;
const toToken = (r: Record<string, unknown> | undefined): TokenRow | null =>
  r ? ({ ...r, scopes: JSON.parse(r.scopes as string) } as TokenRow) : null;

export const getUser = (db: Database, userId: number): UserRow | null =>
  (prepared(db, `${USER} WHERE user_id = ?`).get(userId) as UserRow) ?? null;
export const getUserByName = (db: Database, name: string): UserRow | null =>
  (prepared(db, `${USER} WHERE name = ?`).get(name) as UserRow) ?? null;
export const listUsers = (db: Database): UserRow[] => prepared(db, `${USER} ORDER BY user_id`).all() as UserRow[];

export function* readAgent(agentId: number): Steps<AgentRow | null> {
  return toAgent(yield* get(`${AGENT} WHERE a.agent_id = ?`, agentId));
}
export const getAgent = (db: Database, agentId: number): AgentRow | null => applySteps(db, readAgent(agentId));
export const getAgentByName = (db: Database, ownerId: number, name: string): AgentRow | null =>
  toAgent(prepared(db, `${AGENT} WHERE a.owner_id = ? AND a.name = ?`).get(ownerId, name) as never);
export const listAgents = (db: Database, ownerId?: number): AgentRow[] =>
  (ownerId === undefined
    ? prepared(db, `${AGENT} ORDER BY a.agent_id`).all()
    : prepared(db, `${AGENT} WHERE a.owner_id = ? ORDER BY a.agent_id`).all(ownerId)
  ).map((r) => toAgent(r as never)!);

/** The live (not revoked) token with this sha256, if any. */
export const findActiveToken = (db: Database, tokenHash: string): TokenRow | null =>
  toToken(prepared(db, `${TOKEN} WHERE token_hash = ? AND revoked_at IS NULL`).get(tokenHash) as never);
export const getToken = (db: Database, tokenId: number): TokenRow | null =>
  toToken(prepared(db, `${TOKEN} WHERE token_id = ?`).get(tokenId) as never);
export const tokensOf = (db: Database, kind: 'user' | 'agent', id: number): TokenRow[] =>
  prepared(db, `${TOKEN} WHERE principal_kind = ? AND principal_id = ? ORDER BY token_id`)
    .all(kind, id)
    .map((r) => toToken(r as never)!);
export const sealedTokenOf = (db: Database, agentId: number): string | null =>
  (
    prepared(
      db,
      `SELECT sealed FROM tokens WHERE principal_kind = 'agent' AND principal_id = ? AND revoked_at IS NULL AND sealed IS NOT NULL
    ORDER BY token_id DESC LIMIT 1`,
    ).get(agentId) as { sealed: string } | undefined
  )?.sealed ?? null;

/** The agent's spawn ancestors (parent, grandparent, …), nearest first. */
export function* readAncestors(agentId: number): Steps<number[]> {
  const rows = yield* all<{ id: number }>(
    `WITH RECURSIVE up(id, parent, n) AS (SELECT agent_id, parent_id, 0 FROM agents WHERE agent_id = ?
    UNION ALL SELECT a.agent_id, a.parent_id, up.n + 1 FROM agents a JOIN up ON a.agent_id = up.parent WHERE up.n < 64)
    SELECT id FROM up WHERE id <> ? ORDER BY n`,
    agentId,
    agentId,
  );
  return rows.map((r) => r.id);
}
export const ancestorsOf = (db: Database, agentId: number): number[] => applySteps(db, readAncestors(agentId));

/** Every agent spawned from this one, directly or through its children. */
export const descendantsOf = (db: Database, agentId: number): number[] =>
  (
    prepared(
      db,
      `WITH RECURSIVE down(id, n) AS (SELECT agent_id, 0 FROM agents WHERE parent_id = ?
    UNION ALL SELECT a.agent_id, down.n + 1 FROM agents a JOIN down ON a.parent_id = down.id WHERE down.n < 64)
    SELECT DISTINCT id FROM down ORDER BY id`,
    ).all(agentId) as { id: number }[]
  ).map((r) => r.id);

/** Whether two agents are the same agent or one spawned the other, at any distance (a conflict of interest for verdicts). */
export function* readSameLineage(a: number, b: number): Steps<boolean> {
  return a === b || (yield* readAncestors(a)).includes(b) || (yield* readAncestors(b)).includes(a);
}
export const sameLineage = (db: Database, a: number, b: number): boolean => applySteps(db, readSameLineage(a, b));

/** The team's rate card (`colony config set rate-card`): model → dollars per million tokens; {} when none. */
export const rateCardOf = (db: Database, userId: number): Record<string, ModelRate> => {
  const row = prepared(db, 'SELECT rate_card AS r FROM users WHERE user_id = ?').get(userId) as
    { r: string | null } | undefined;
  return row?.r ? (JSON.parse(row.r) as Record<string, ModelRate>) : {};
};
