import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { PrincipalEvent, Tier, TokenScope } from '../events/principals.js';
import type { ReputationEvent } from '../events/reputation.js';
import { agentConfigHash } from '../events/principals.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { type AgentMcpServer } from '../events/agent-config.js';

/** Owners, agents and tokens as read tables: who a bearer token belongs to, and what it may do. */
type T = 'users' | 'agents' | 'tokens';

const sql = sqlFor((t: Record<T, string>) => ({
  user: `INSERT OR IGNORE INTO "${t.users}" (user_id, name, role, created_at) VALUES (?, ?, ?, ?)`,
  agentCommand: `UPDATE "${t.users}" SET agent_command = ? WHERE user_id = ?`,
  agent: `INSERT OR IGNORE INTO "${t.agents}" (agent_id, name, owner_id, model, system_prompt, tool_scope, tier, command,
    parent_id, spawn_depth, status, quarantined, config_hash, skills, mcp_servers, subagents, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'idle', 0, ?, ?, ?, ?, ?)`,
  config: `UPDATE "${t.agents}" SET model = ?, system_prompt = ?, tool_scope = ?, skills = ?, mcp_servers = ?, subagents = ?, tier = ?, command = ?,
    config_hash = ? WHERE agent_id = ?`,
  quarantine: `UPDATE "${t.agents}" SET quarantined = 1, quarantine_reason = ?, quarantined_at = ? WHERE agent_id = ?`,
  unquarantine: `UPDATE "${t.agents}" SET quarantined = 0, quarantine_reason = NULL, quarantined_at = NULL WHERE agent_id = ?`,
  token: `INSERT OR IGNORE INTO "${t.tokens}" (token_id, principal_kind, principal_id, token_hash, label, scopes, sealed, issued_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  revoke: `UPDATE "${t.tokens}" SET revoked_at = ?, revoke_reason = ? WHERE token_id = ? AND revoked_at IS NULL`,
}));

export const principalsProjection: Projection<PrincipalEvent | ReputationEvent, T> = {
  name: 'principals',
  version: 3,
  handles: [
    'UserCreated',
    'AgentRegistered',
    'TokenIssued',
    'TokenRevoked',
    'AgentQuarantined',
    'AgentUnquarantined',
    'AgentConfigUpdated',
    'AgentCommandSet',
  ],
  tables: ['users', 'agents', 'tokens'],
  init(db, t) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS "${t.users}" (user_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, role TEXT NOT NULL, created_at TEXT NOT NULL,
        agent_command TEXT);
      CREATE TABLE IF NOT EXISTS "${t.agents}" (
        agent_id INTEGER PRIMARY KEY, name TEXT NOT NULL, owner_id INTEGER NOT NULL, model TEXT NOT NULL,
        system_prompt TEXT NOT NULL, tool_scope TEXT NOT NULL, tier TEXT NOT NULL, command TEXT,
        parent_id INTEGER, spawn_depth INTEGER NOT NULL, status TEXT NOT NULL, quarantined INTEGER NOT NULL,
        quarantine_reason TEXT, quarantined_at TEXT, config_hash TEXT NOT NULL, skills TEXT NOT NULL, mcp_servers TEXT NOT NULL,
        subagents TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS "${t.agents}_by_owner_name" ON "${t.agents}" (owner_id, name);
      CREATE TABLE IF NOT EXISTS "${t.tokens}" (
        token_id INTEGER PRIMARY KEY, principal_kind TEXT NOT NULL, principal_id INTEGER NOT NULL,
        token_hash TEXT NOT NULL UNIQUE, label TEXT NOT NULL, scopes TEXT NOT NULL, sealed TEXT,
        issued_at TEXT NOT NULL, revoked_at TEXT, revoke_reason TEXT);
      CREATE INDEX IF NOT EXISTS "${t.tokens}_by_principal" ON "${t.tokens}" (principal_kind, principal_id);
    `);
  },
  apply(db, e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'UserCreated':
        prepared(db, q.user).run(e.data.userId, e.data.name, e.data.role, e.recordedAt);
        return;
      case 'AgentRegistered': {
        const a = e.data;
        prepared(db, q.agent).run(
          a.agentId,
          a.name,
          a.ownerId,
          a.model,
          a.systemPrompt,
          JSON.stringify(a.toolScope),
          a.tier,
          a.command,
          a.parentId,
          a.spawnDepth,
          a.configHash ?? agentConfigHash(a),
          JSON.stringify(a.skills ?? []),
          JSON.stringify(a.mcpServers ?? []),
          JSON.stringify(a.subagents ?? []),
          e.recordedAt,
        );
        return;
      }
      case 'AgentQuarantined':
        prepared(db, q.quarantine).run(e.data.reason, e.recordedAt, e.data.agentId);
        return;
      case 'AgentUnquarantined':
        prepared(db, q.unquarantine).run(e.data.agentId);
        return;
      case 'EvidenceRecorded':
        return;
      case 'AgentConfigUpdated': {
        const c = e.data;
        prepared(db, q.config).run(
          c.model,
          c.systemPrompt,
          JSON.stringify(c.toolScope),
          JSON.stringify(c.skills),
          JSON.stringify(c.mcpServers),
          JSON.stringify(c.subagents),
          c.tier,
          c.command,
          c.configHash,
          c.agentId,
        );
        return;
      }
      case 'TokenIssued': {
        const [kind, id] = principalOf(e.streamId);
        prepared(db, q.token).run(
          e.data.tokenId,
          kind,
          id,
          e.data.tokenHash,
          e.data.label,
          JSON.stringify(e.data.scopes),
          e.data.sealed,
          e.recordedAt,
        );
        return;
      }
      case 'TokenRevoked':
        prepared(db, q.revoke).run(e.recordedAt, e.data.reason, e.data.tokenId);
        return;
      case 'AgentCommandSet':
        prepared(db, q.agentCommand).run(e.data.command, e.data.userId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

const principalOf = (streamId: string): ['user' | 'agent', number] => {
  const [kind, id] = streamId.split('-');
  return [kind === 'agent' ? 'agent' : 'user', Number(id)];
};

export interface UserRow {
  userId: number;
  name: string;
  role: 'owner';
  createdAt: string;
  agentCommand: string | null;
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

const USER = 'SELECT user_id AS userId, name, role, created_at AS createdAt, agent_command AS agentCommand FROM users';
// `a.` everywhere: users joins in for the team's default command, and both tables have a name.
const AGENT = `SELECT a.agent_id AS agentId, a.name, a.owner_id AS ownerId, a.model, a.system_prompt AS systemPrompt, a.tool_scope AS toolScope,
  a.tier, COALESCE(a.command, u.agent_command) AS command, a.command AS ownCommand, a.parent_id AS parentId, a.spawn_depth AS spawnDepth,
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

export const getAgent = (db: Database, agentId: number): AgentRow | null =>
  toAgent(prepared(db, `${AGENT} WHERE a.agent_id = ?`).get(agentId) as never);
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
export const ancestorsOf = (db: Database, agentId: number): number[] =>
  (
    prepared(
      db,
      `WITH RECURSIVE up(id, parent, n) AS (SELECT agent_id, parent_id, 0 FROM agents WHERE agent_id = ?
    UNION ALL SELECT a.agent_id, a.parent_id, up.n + 1 FROM agents a JOIN up ON a.agent_id = up.parent WHERE up.n < 64)
    SELECT id FROM up WHERE id <> ? ORDER BY n`,
    ).all(agentId, agentId) as { id: number }[]
  ).map((r) => r.id);

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
export const sameLineage = (db: Database, a: number, b: number): boolean =>
  a === b || ancestorsOf(db, a).includes(b) || ancestorsOf(db, b).includes(a);
