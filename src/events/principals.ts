import type { Event } from '../engine/event.js';
import { configHash, type AgentMcpServer } from './agent-config.js';

/**
 * Principals — human owners and agents — and their API tokens. Only a token's sha256 is ever stored;
 * an agent token is also kept sealed (secretbox under the master key) so Colony can start the agent.
 * Streams: `user-<id>` and `agent-<id>`; a principal's tokens live on its own stream.
 */
export type Tier = 'supervised' | 'assisted' | 'autonomous';
export const TIERS: readonly Tier[] = ['supervised', 'assisted', 'autonomous'];

/**
 * What Colony launches for an agent: an agent CLI it knows (each has an adapter in runtime/adapters/ that
 * owns its launch line, reads its result and its usage), or `command`, the owner's own `sh -c` line.
 */
export type Runtime = 'claude-code' | 'codex' | 'opencode' | 'command';
export const RUNTIMES: readonly Runtime[] = ['claude-code', 'codex', 'opencode', 'command'];

/** What a token lets its holder reach: `mcp` (the MCP endpoint), `api` (REST and the UI). */
export type TokenScope = 'mcp' | 'api';

/*
 * Who acts: the shapes of a principal, all here, from the richest to the smallest.
 * - Caller: the principal behind a bearer token as authentication found it, read afresh on every request
 *   (a revoked token or a quarantine takes effect at once). An OAuth access token names its grant in
 *   `oauth` and has `tokenId` 0; everything else is the principal's own.
 * - Speaker: a principal acting in its tenant — what channels, goals and tasks decide with.
 * - By: who did something, as events record it.
 * - AgentRef: an agent by id, as task events name an assignee.
 */
export interface By {
  /** `user-<id>`, `agent-<id>` or `system`. */
  key: string;
  name: string;
}
export interface Speaker extends By {
  /** The owner id of the speaker's tenant. */
  tenant: number;
}
export interface AgentRef {
  agentId: number;
  name: string;
}
export interface OAuthVia {
  grantId: number;
  clientId: string;
  expiresAt: string;
}
export type Caller =
  | { kind: 'owner'; tokenId: number; userId: number; name: string; scopes: TokenScope[]; oauth?: OAuthVia }
  | {
      kind: 'agent';
      tokenId: number;
      agentId: number;
      ownerId: number;
      name: string;
      scopes: TokenScope[];
      toolScope: string[];
      quarantined: boolean;
      oauth?: OAuthVia;
    };

export const speaker = (c: Caller): Speaker =>
  c.kind === 'owner'
    ? { key: `user-${c.userId}`, name: c.name, tenant: c.userId }
    : { key: `agent-${c.agentId}`, name: c.name, tenant: c.ownerId };

export type UserCreated = Event<'UserCreated', { userId: number; name: string; role: 'owner' }>;

export type AgentRegistered = Event<
  'AgentRegistered',
  {
    agentId: number;
    name: string;
    ownerId: number;
    model: string;
    systemPrompt: string;
    toolScope: string[];
    tier: Tier;
    command: string | null;
    /** Its own runtime; null or absent (agents registered before runtimes): the team's (AgentRuntimeSet). */
    runtime?: Runtime | null;
    parentId: number | null;
    spawnDepth: number;
    /** Added with spawning; absent in agents registered before (they read as [] and their hash is computed). */
    skills?: string[];
    mcpServers?: AgentMcpServer[];
    subagents?: string[];
    configHash?: string;
  }
>;

export type TokenIssued = Event<
  'TokenIssued',
  {
    tokenId: number;
    tokenHash: string;
    label: string;
    scopes: TokenScope[];
    /** base64(nonce ‖ secretbox) of the token for agents Colony starts; null for owners (shown once). */
    sealed: string | null;
  }
>;

export type TokenRevoked = Event<'TokenRevoked', { tokenId: number; reason: string }>;

/**
 * A config change: a new hash when a hashed field changed; tier-only changes keep the hash. Reputation is
 * kept per config hash, so a changed config starts from its own evidence.
 */
export type AgentConfigUpdated = Event<
  'AgentConfigUpdated',
  {
    agentId: number;
    model: string;
    systemPrompt: string;
    toolScope: string[];
    skills: string[];
    mcpServers: AgentMcpServer[];
    subagents: string[];
    tier: Tier;
    command: string | null;
    runtime?: Runtime | null;
    configHash: string;
    previousHash: string;
  }
>;

/**
 * The owner's default backend command for the team: what Colony runs for the coordinator and
 * every agent without a command of its own. Written only by the owner (CLI); null clears it.
 */
export type AgentCommandSet = Event<'AgentCommandSet', { userId: number; command: string | null }>;

/** The team's default runtime (`colony config set agent-runtime`): what agents without their own run under; null clears it. */
export type AgentRuntimeSet = Event<'AgentRuntimeSet', { userId: number; runtime: Runtime | null }>;

/** Dollars per million tokens of one model, for CLIs that report tokens without cost (Codex, OpenCode on unpriced models). */
export interface ModelRate {
  input: number;
  output: number;
  /** Cached input, when the provider prices it apart (else `input`). */
  cachedInput?: number;
}
/** The team's rate card (`colony config set rate-card FILE`): model → rate; {} clears it. */
export type RateCardSet = Event<'RateCardSet', { userId: number; rates: Record<string, ModelRate> }>;

export type PrincipalEvent =
  | RateCardSet
  | UserCreated
  | AgentRegistered
  | TokenIssued
  | TokenRevoked
  | AgentConfigUpdated
  | AgentCommandSet
  | AgentRuntimeSet;

export const userStream = (userId: number): string => `user-${userId}`;
/** Whether `by` is the owner of tenant `ownerId` in person (an owner's token, not one of its agents). */
export const isOwner = (by: Pick<By, 'key'>, ownerId: number): boolean => by.key === userStream(ownerId);
export const agentStream = (agentId: number): string => `agent-${agentId}`;

/**
 * An agent's config hash from its registration: what makes it behave as it does (model, prompt, tools,
 * skills, MCP servers, subagents), so its reputation belongs to that config, not to its name.
 */
export const agentConfigHash = (a: AgentRegistered['data']): string =>
  configHash({
    model: a.model,
    system_prompt: a.systemPrompt,
    tool_scope: a.toolScope,
    skills: a.skills ?? [],
    mcp_servers: a.mcpServers ?? [],
    subagents: a.subagents ?? [],
  });
