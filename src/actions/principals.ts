import type { App } from '../app.js';
import type { CommandOptions } from '../engine/handle.js';
import { principalDecider } from '../commands/principals.js';
import { DomainError, notFound } from '../errors.js';
import type { KnownTools } from '../commands/tool-scope.js';
import type { AgentNameFacts } from '../commands/agent-names.js';
import {
  agentStream,
  userStream,
  type AgentRegistered,
  type Runtime,
  type Speaker,
  type TokenScope,
} from '../events/principals.js';
import { seal } from '../masterkey.js';
import {
  getAgent,
  getAgentByName,
  getUser,
  getToken,
  getUserByName,
  listUsers,
  tokensOf,
  type UserRow,
} from '../projections/principal-queries.js';
import { seedRootReputation } from './reputation.js';
import { newToken, tokenHash } from '../tokens.js';

/**
 * What owners and agents become, shared by the CLI and the MCP tools: each function is one command
 * (one transaction) over the principal streams it touches. Tokens are returned once and never stored.
 */
export function ownerOf(app: App): UserRow | null {
  return listUsers(app.engine.db)[0] ?? null;
}

export function createOwner(app: App, name: string, by: CommandOptions): { userId: number; token: string } {
  const { engine } = app;
  const result = engine.transact(by, (uow) => {
    const nameTaken = getUserByName(engine.db, name) !== null;
    const userId = uow.ids.next('user');
    engine.handle(principalDecider, userStream(userId), { type: 'CreateUser', userId, name, nameTaken }, by);
    const token = issue(app, 'user', userId, 'owner token', ['mcp', 'api'], false, uow.ids.next('token'), by);
    return { userId, token };
  });
  if (!result.value) throw new DomainError('ErrDuplicateCommand', 'this command already ran; its token was shown then');
  return result.value;
}

export type AgentSpec = Omit<AgentRegistered['data'], 'agentId'>;

/** The facts an agent's name is decided on in the owner's team (commands/agent-names.ts). */
export function agentNameFacts(app: App, ownerId: number, name: string): AgentNameFacts {
  return {
    ownerName: getUser(app.engine.db, ownerId)?.name ?? null,
    taken: getAgentByName(app.engine.db, ownerId, name) !== null,
  };
}

/**
 * `knownTools` (the tool registry's names): given, the scope may name only agent-surface tools
 * (commands/tool-scope.ts). `agentId`: the id the caller took for it already (an approved spawn).
 */
export function registerAgent(
  app: App,
  spec: AgentSpec,
  by: CommandOptions,
  knownTools?: KnownTools,
  agentId?: number,
): { agentId: number; name: string; token: string } {
  const { engine } = app;
  const result = engine.transact(by, (uow) => {
    const names = agentNameFacts(app, spec.ownerId, spec.name);
    const id = agentId ?? uow.ids.next('agent');
    engine.handle(
      principalDecider,
      agentStream(id),
      { type: 'RegisterAgent', agent: { agentId: id, ...spec }, knownTools, names },
      by,
    );
    if (spec.parentId === null) seedRootReputation(app, getAgent(engine.db, id)!, by);
    const token = issue(app, 'agent', id, 'agent token', ['mcp'], true, uow.ids.next('token'), by);
    return { agentId: id, name: spec.name, token };
  });
  if (!result.value) throw new DomainError('ErrDuplicateCommand', 'this command already ran; its token was shown then');
  return result.value;
}

/** Revokes every live token of the principal and issues a new one (returned once). */
export function rotateToken(app: App, kind: 'user' | 'agent', id: number, by: CommandOptions): string {
  const { engine } = app;
  const result = engine.transact(by, (uow) => {
    for (const t of tokensOf(engine.db, kind, id).filter((x) => !x.revokedAt))
      revoke(app, kind, id, t.tokenId, 'rotated', by);
    const scopes: TokenScope[] = kind === 'user' ? ['mcp', 'api'] : ['mcp'];
    return issue(
      app,
      kind,
      id,
      `${kind === 'user' ? 'owner' : 'agent'} token`,
      scopes,
      kind === 'agent',
      uow.ids.next('token'),
      by,
    );
  });
  if (!result.value) throw new DomainError('ErrDuplicateCommand', 'this command already ran; its token was shown then');
  return result.value;
}

/** Issues an additional token for the principal (returned once). */
export function createToken(
  app: App,
  kind: 'user' | 'agent',
  id: number,
  label: string,
  scopes: TokenScope[],
  by: CommandOptions,
): string {
  const result = app.engine.transact(by, (uow) =>
    issue(app, kind, id, label, scopes, kind === 'agent', uow.ids.next('token'), by),
  );
  if (!result.value) throw new DomainError('ErrDuplicateCommand', 'this command already ran; its token was shown then');
  return result.value;
}

export function revokeToken(
  app: App,
  kind: 'user' | 'agent',
  id: number,
  tokenId: number,
  reason: string,
  by: CommandOptions,
): boolean {
  return revoke(app, kind, id, tokenId, reason, by).events.length > 0;
}

function revoke(app: App, kind: 'user' | 'agent', id: number, tokenId: number, reason: string, by: CommandOptions) {
  const stream = kind === 'user' ? userStream(id) : agentStream(id);
  return app.engine.transact(by, () => {
    const row = getToken(app.engine.db, tokenId);
    const token = row && { kind: row.principalKind, principalId: row.principalId, revoked: row.revokedAt !== null };
    return app.engine.handle(principalDecider, stream, { type: 'RevokeToken', tokenId, reason, token }, by);
  });
}

function issue(
  app: App,
  kind: 'user' | 'agent',
  id: number,
  label: string,
  scopes: TokenScope[],
  sealIt: boolean,
  tokenId: number,
  by: CommandOptions,
): string {
  const token = newToken();
  const stream = kind === 'user' ? userStream(id) : agentStream(id);
  const data = { tokenId, tokenHash: tokenHash(token), label, scopes, sealed: sealIt ? seal(app.key, token) : null };
  app.engine.handle(principalDecider, stream, { type: 'IssueToken', token: data }, by);
  return token;
}

/**
 * The team's default agent command (`colony config set agent-command`, `colony init --agent-command`):
 * what Colony runs for the coordinator and every agent of this owner without a command of its own. Only
 * the owner sets it, from the CLI — like every command line Colony runs on the host (docs/security.md: What runs on the host).
 */
export function setAgentCommand(app: App, ownerId: number, command: string | null, by: CommandOptions): string | null {
  app.engine.handle(principalDecider, userStream(ownerId), { type: 'SetAgentCommand', command }, by);
  return getUser(app.engine.db, ownerId)?.agentCommand ?? null;
}

/**
 * The team's default runtime (`colony config set agent-runtime`): what agents without a runtime or command
 * of their own run under. Only the owner sets it, from the CLI, after the runtime's checks (runtime/adapters).
 */
export function setAgentRuntime(
  app: App,
  ownerId: number,
  runtime: Runtime | null,
  by: CommandOptions,
): Runtime | null {
  app.engine.handle(principalDecider, userStream(ownerId), { type: 'SetAgentRuntime', runtime }, by);
  return getUser(app.engine.db, ownerId)?.agentRuntime ?? null;
}

/** The team's rate card (`colony config set rate-card FILE`); the decider checks every price. */
export function setRateCard(app: App, ownerId: number, rates: Record<string, unknown>, by: CommandOptions): void {
  app.engine.handle(principalDecider, userStream(ownerId), { type: 'SetRateCard', rates: rates as never }, by);
}

/** The speaker behind a principal key, for the CLI and tests. */
export function speakerOf(app: App, key: string): Speaker {
  const [kind, id] = [key.split('-')[0], Number(key.split('-')[1])];
  if (kind === 'user') {
    const user = getUser(app.engine.db, id);
    if (user) return { key, name: user.name, tenant: user.userId };
  } else {
    const agent = getAgent(app.engine.db, id);
    if (agent) return { key, name: agent.name, tenant: agent.ownerId };
  }
  throw notFound(`principal ${key}`);
}
