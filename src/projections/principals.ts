import type { PrincipalEvent } from '../events/principals.js';
import type { ReputationEvent } from '../events/reputation.js';
import { agentConfigHash } from '../events/principals.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * Owners, agents and tokens as read tables: who a bearer token belongs to, and what it may do. Queries:
 * principal-queries.ts.
 */
type T = 'users' | 'agents' | 'tokens';

const sql = sqlFor((t: Record<T, string>) => ({
  user: `INSERT OR IGNORE INTO "${t.users}" (user_id, name, role, created_at) VALUES (?, ?, ?, ?)`,
  agentCommand: `UPDATE "${t.users}" SET agent_command = ? WHERE user_id = ?`,
  agentRuntime: `UPDATE "${t.users}" SET agent_runtime = ? WHERE user_id = ?`,
  rateCard: `UPDATE "${t.users}" SET rate_card = ? WHERE user_id = ?`,
  agent: `INSERT OR IGNORE INTO "${t.agents}" (agent_id, name, owner_id, model, system_prompt, tool_scope, tier, command,
    runtime, parent_id, spawn_depth, status, quarantined, config_hash, skills, mcp_servers, subagents, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'idle', 0, ?, ?, ?, ?, ?)`,
  config: `UPDATE "${t.agents}" SET model = ?, system_prompt = ?, tool_scope = ?, skills = ?, mcp_servers = ?, subagents = ?, tier = ?, command = ?,
    runtime = ?, config_hash = ? WHERE agent_id = ?`,
  quarantine: `UPDATE "${t.agents}" SET quarantined = 1, quarantine_reason = ?, quarantined_at = ? WHERE agent_id = ?`,
  unquarantine: `UPDATE "${t.agents}" SET quarantined = 0, quarantine_reason = NULL, quarantined_at = NULL WHERE agent_id = ?`,
  token: `INSERT OR IGNORE INTO "${t.tokens}" (token_id, principal_kind, principal_id, token_hash, label, scopes, sealed, issued_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  revoke: `UPDATE "${t.tokens}" SET revoked_at = ?, revoke_reason = ? WHERE token_id = ? AND revoked_at IS NULL`,
}));

export const principalsProjection: Projection<PrincipalEvent | ReputationEvent, T> = {
  name: 'principals',
  version: 4,
  handles: [
    'UserCreated',
    'AgentRegistered',
    'TokenIssued',
    'TokenRevoked',
    'AgentQuarantined',
    'AgentUnquarantined',
    'AgentConfigUpdated',
    'AgentCommandSet',
    'AgentRuntimeSet',
    'RateCardSet',
  ],
  tables: ['users', 'agents', 'tokens'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.users}" (user_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, role TEXT NOT NULL, created_at TEXT NOT NULL,
        agent_command TEXT, agent_runtime TEXT, rate_card TEXT);
      CREATE TABLE IF NOT EXISTS "${t.agents}" (
        agent_id INTEGER PRIMARY KEY, name TEXT NOT NULL, owner_id INTEGER NOT NULL, model TEXT NOT NULL,
        system_prompt TEXT NOT NULL, tool_scope TEXT NOT NULL, tier TEXT NOT NULL, command TEXT, runtime TEXT,
        parent_id INTEGER, spawn_depth INTEGER NOT NULL, status TEXT NOT NULL, quarantined INTEGER NOT NULL,
        quarantine_reason TEXT, quarantined_at TEXT, config_hash TEXT NOT NULL, skills TEXT NOT NULL, mcp_servers TEXT NOT NULL,
        subagents TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS "${t.agents}_by_owner_name" ON "${t.agents}" (owner_id, name);
      CREATE TABLE IF NOT EXISTS "${t.tokens}" (
        token_id INTEGER PRIMARY KEY, principal_kind TEXT NOT NULL, principal_id INTEGER NOT NULL,
        token_hash TEXT NOT NULL UNIQUE, label TEXT NOT NULL, scopes TEXT NOT NULL, sealed TEXT,
        issued_at TEXT NOT NULL, revoked_at TEXT, revoke_reason TEXT);
      CREATE INDEX IF NOT EXISTS "${t.tokens}_by_principal" ON "${t.tokens}" (principal_kind, principal_id);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'UserCreated':
        yield run(q.user, e.data.userId, e.data.name, e.data.role, e.recordedAt);
        return;
      case 'AgentRegistered': {
        const a = e.data;
        yield run(
          q.agent,
          a.agentId,
          a.name,
          a.ownerId,
          a.model,
          a.systemPrompt,
          JSON.stringify(a.toolScope),
          a.tier,
          a.command,
          a.runtime ?? null,
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
        yield run(q.quarantine, e.data.reason, e.recordedAt, e.data.agentId);
        return;
      case 'AgentUnquarantined':
        yield run(q.unquarantine, e.data.agentId);
        return;
      case 'EvidenceRecorded':
        return;
      case 'AgentConfigUpdated': {
        const c = e.data;
        yield run(
          q.config,
          c.model,
          c.systemPrompt,
          JSON.stringify(c.toolScope),
          JSON.stringify(c.skills),
          JSON.stringify(c.mcpServers),
          JSON.stringify(c.subagents),
          c.tier,
          c.command,
          c.runtime ?? null,
          c.configHash,
          c.agentId,
        );
        return;
      }
      case 'TokenIssued': {
        const [kind, id] = principalOf(e.streamId);
        yield run(
          q.token,
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
        yield run(q.revoke, e.recordedAt, e.data.reason, e.data.tokenId);
        return;
      case 'AgentCommandSet':
        yield run(q.agentCommand, e.data.command, e.data.userId);
        return;
      case 'AgentRuntimeSet':
        yield run(q.agentRuntime, e.data.runtime, e.data.userId);
        return;
      case 'RateCardSet':
        yield run(q.rateCard, JSON.stringify(e.data.rates), e.data.userId);
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
