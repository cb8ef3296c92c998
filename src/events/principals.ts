import { configHash, type McpServer } from '../commands/trust.js';
import type { Event } from './event.js';

/**
 * Principals — human owners and agents — and their API tokens. Only a token's sha256 is ever stored;
 * an agent token is also kept sealed (secretbox under the master key) so Colony can start the agent.
 * Streams: `user-<id>` and `agent-<id>`; a principal's tokens live on its own stream.
 */
export type Tier = 'supervised' | 'assisted' | 'autonomous';
export const TIERS: readonly Tier[] = ['supervised', 'assisted', 'autonomous'];

/** What a token lets its holder reach: `mcp` (the MCP endpoint), `api` (REST and the UI). */
export type TokenScope = 'mcp' | 'api';

export type UserCreated = Event<'UserCreated', { userId: number; name: string; role: 'owner' }>;

export type AgentRegistered = Event<'AgentRegistered', {
  agentId: number;
  name: string;
  ownerId: number;
  model: string;
  systemPrompt: string;
  toolScope: string[];
  tier: Tier;
  command: string | null;
  parentId: number | null;
  spawnDepth: number;
  /** Added with spawning; absent in agents registered before (they read as [] and their hash is computed). */
  skills?: string[];
  mcpServers?: McpServer[];
  subagents?: string[];
  configHash?: string;
}>;

export type TokenIssued = Event<'TokenIssued', {
  tokenId: number;
  tokenHash: string;
  label: string;
  scopes: TokenScope[];
  /** base64(nonce ‖ secretbox) of the token for agents Colony starts; null for owners (shown once). */
  sealed: string | null;
}>;

export type TokenRevoked = Event<'TokenRevoked', { tokenId: number; reason: string }>;

/** A config change (FR-015): a new hash when a hashed field changed; tier-only changes keep the hash. */
export type AgentConfigUpdated = Event<'AgentConfigUpdated', {
  agentId: number;
  model: string;
  systemPrompt: string;
  toolScope: string[];
  skills: string[];
  mcpServers: McpServer[];
  subagents: string[];
  tier: Tier;
  command: string | null;
  configHash: string;
  previousHash: string;
}>;

/**
 * The owner's default backend command for the team (issue 15): what Colony runs for the coordinator and
 * every agent without a command of its own. Written only by the owner (CLI); null clears it.
 */
export type AgentCommandSet = Event<'AgentCommandSet', { userId: number; command: string | null }>;

export type PrincipalEvent = UserCreated | AgentRegistered | TokenIssued | TokenRevoked | AgentConfigUpdated | AgentCommandSet;

export const userStream = (userId: number): string => `user-${userId}`;
export const agentStream = (agentId: number): string => `agent-${agentId}`;

/** An agent's config hash (DESIGN §3.10) from its registration. */
export const agentConfigHash = (a: AgentRegistered['data']): string => configHash({
  model: a.model, system_prompt: a.systemPrompt, tool_scope: a.toolScope, skills: a.skills ?? [], mcp_servers: a.mcpServers ?? [], subagents: a.subagents ?? [],
});
