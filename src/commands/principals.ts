import { DomainError, invalidInput } from '../errors.js';
import { RUNTIMES, type ModelRate, type Runtime } from '../events/principals.js';
import type { AgentConfigUpdated, AgentRegistered, PrincipalEvent, TokenIssued } from '../events/principals.js';
import type { ReputationEvent } from '../events/reputation.js';
import type { Decider } from '../engine/decider.js';
import { checkAgentName, type AgentNameFacts } from './agent-names.js';
import { checkToolScope, type KnownTools } from './tool-scope.js';

/**
 * One decider for both kinds of principal (`user-N`, `agent-N` streams): creation once, then tokens
 * issued and revoked, an agent's config and the owner's team command. What other principals hold — the
 * names in use (`nameTaken`, `names`) — are facts from other streams the caller reads in the same
 * transaction and passes in; so are the tools that exist (`knownTools`, from the tool registry), given by
 * every path that takes a tool scope from a person or an agent (CLI, MCP). Colony's own constant scopes
 * (the default coordinator) and spawns (already within the parent's scope) omit it; every other fact is
 * required, so no caller can skip a rule by leaving its fact out.
 */
export type CreateUser = { type: 'CreateUser'; userId: number; name: string; nameTaken: boolean };
export type RegisterAgent = {
  type: 'RegisterAgent';
  agent: AgentRegistered['data'];
  knownTools?: KnownTools;
  names: AgentNameFacts;
};
export type IssueToken = { type: 'IssueToken'; token: TokenIssued['data'] };
export type RevokeToken = {
  type: 'RevokeToken';
  tokenId: number;
  reason: string;
  /** Fact from the tokens projection: whose token this id is and whether it is revoked (null: no such token). */
  token: { kind: 'user' | 'agent'; principalId: number; revoked: boolean } | null;
};
/** `before`: the agent's tier and own command now (its config hash now is `config.previousHash`). */
export type UpdateAgentConfig = {
  type: 'UpdateAgentConfig';
  config: AgentConfigUpdated['data'];
  before: { tier: AgentConfigUpdated['data']['tier']; command: string | null; runtime: Runtime | null };
  knownTools?: KnownTools;
};
export type SetAgentCommand = { type: 'SetAgentCommand'; command: string | null };
export type SetAgentRuntime = { type: 'SetAgentRuntime'; runtime: Runtime | null };
export type SetRateCard = { type: 'SetRateCard'; rates: Record<string, ModelRate> };
export type PrincipalCommand =
  | CreateUser
  | RegisterAgent
  | IssueToken
  | RevokeToken
  | UpdateAgentConfig
  | SetAgentCommand
  | SetAgentRuntime
  | SetRateCard;

/** A backend command line: one line of at most this many characters (it is shown in full wherever it is approved or listed). */
export const MAX_AGENT_COMMAND = 4096;

/** Bounded (docs/architecture.md, "Aggregates stay small"): a principal's tokens are not kept here, the revoke command brings its token's facts. */
export type Principal = { status: 'absent' } | { status: 'active'; kind: 'user' | 'agent'; id: number; name: string };

export const NAME_PATTERN = /^[a-z][a-z0-9-]{2,63}$/;

/** Reputation events share the agent stream; they are the reputation decider's (commands/reputation.ts). */
function evolve(state: Principal, event: PrincipalEvent | ReputationEvent): Principal {
  switch (event.type) {
    case 'EvidenceRecorded':
    case 'AgentQuarantined':
    case 'AgentUnquarantined':
    case 'AgentConfigUpdated':
    case 'AgentCommandSet':
    case 'AgentRuntimeSet':
    case 'RateCardSet':
    case 'TokenIssued':
    case 'TokenRevoked':
      return state;
    case 'UserCreated':
      return { status: 'active', kind: 'user', id: event.data.userId, name: event.data.name };
    case 'AgentRegistered':
      return { status: 'active', kind: 'agent', id: event.data.agentId, name: event.data.name };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: PrincipalCommand, state: Principal): (PrincipalEvent | ReputationEvent)[] {
  switch (command.type) {
    case 'CreateUser':
      if (command.nameTaken) throw new DomainError('ErrPrincipalExists', `a user named ${command.name} already exists`);
      if (state.status !== 'absent')
        throw new DomainError('ErrPrincipalExists', `user ${command.userId} already exists`);
      checkName(command.name);
      return [{ type: 'UserCreated', data: { userId: command.userId, name: command.name, role: 'owner' } }];
    case 'RegisterAgent':
      checkAgentName(command.agent.name, command.names);
      if (state.status !== 'absent')
        throw new DomainError('ErrPrincipalExists', `agent ${command.agent.agentId} already exists`);
      checkName(command.agent.name);
      if (command.agent.toolScope.length === 0)
        throw invalidInput('an agent needs at least one tool in its scope', { field: 'tool_scope' });
      if (command.knownTools) checkToolScope(command.agent.toolScope, command.knownTools);
      checkRuntime(command.agent.runtime);
      return [{ type: 'AgentRegistered', data: command.agent }];
    case 'IssueToken':
      if (state.status !== 'active') throw new DomainError('ErrNotFound', 'principal not found');
      return [{ type: 'TokenIssued', data: command.token }];
    case 'UpdateAgentConfig':
      if (state.status !== 'active' || state.kind !== 'agent') throw new DomainError('ErrNotFound', 'agent not found');
      if (unchanged(command)) return [];
      if (command.config.toolScope.length === 0)
        throw invalidInput('an agent needs at least one tool in its scope', { field: 'tool_scope' });
      if (command.knownTools) checkToolScope(command.config.toolScope, command.knownTools);
      checkRuntime(command.config.runtime);
      return [{ type: 'AgentConfigUpdated', data: command.config }];
    case 'SetAgentCommand': {
      if (state.status !== 'active' || state.kind !== 'user') throw new DomainError('ErrNotFound', 'owner not found');
      const line = command.command === null ? null : checkAgentCommand(command.command);
      return [{ type: 'AgentCommandSet', data: { userId: state.id, command: line } }];
    }
    case 'SetAgentRuntime':
      if (state.status !== 'active' || state.kind !== 'user') throw new DomainError('ErrNotFound', 'owner not found');
      return [{ type: 'AgentRuntimeSet', data: { userId: state.id, runtime: checkRuntime(command.runtime) } }];
    case 'SetRateCard':
      if (state.status !== 'active' || state.kind !== 'user') throw new DomainError('ErrNotFound', 'owner not found');
      return [{ type: 'RateCardSet', data: { userId: state.id, rates: checkRateCard(command.rates) } }];
    case 'RevokeToken': {
      if (state.status !== 'active') throw new DomainError('ErrNotFound', 'principal not found');
      const { token } = command;
      if (!token || token.kind !== state.kind || token.principalId !== state.id)
        throw new DomainError('ErrNotFound', `token ${command.tokenId} not found`, { tokenId: command.tokenId });
      if (token.revoked) return [];
      return [{ type: 'TokenRevoked', data: { tokenId: command.tokenId, reason: command.reason } }];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

/** A change of nothing records nothing: the same config hash, tier and own command. */
const unchanged = ({ config, before }: UpdateAgentConfig): boolean =>
  config.configHash === config.previousHash &&
  config.tier === before.tier &&
  config.command === before.command &&
  (config.runtime ?? null) === before.runtime;

/** A rate card: model names to dollars per million tokens, each a finite number ≥ 0. */
export function checkRateCard(raw: unknown): Record<string, ModelRate> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidInput(
      'a rate card is a JSON object of model → {"input","output","cached_input"?} in dollars per million tokens',
      {
        field: 'rates',
      },
    );
  const out: Record<string, ModelRate> = {};
  for (const [model, v] of Object.entries(raw)) {
    const r = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
    const price = (k: string, optional = false): number | undefined => {
      const x = r[k];
      if (x === undefined && optional) return undefined;
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || x > 1e6)
        throw invalidInput(
          `rate card: ${model}.${k} must be dollars per million tokens (a number ≥ 0), not ${JSON.stringify(x)}`,
          {
            field: 'rates',
          },
        );
      return x;
    };
    if (!model.trim() || model.length > 128)
      throw invalidInput('rate card: a model name is empty or too long', { field: 'rates' });
    const cached = price('cached_input', true) ?? price('cachedInput', true);
    out[model] = {
      input: price('input')!,
      output: price('output')!,
      ...(cached !== undefined ? { cachedInput: cached } : {}),
    };
  }
  return out;
}

/** A runtime Colony knows, or the error that lists them. */
export function checkRuntime(raw: string | null | undefined, field = 'runtime'): Runtime | null {
  if (raw === null || raw === undefined) return null;
  if (!RUNTIMES.includes(raw as Runtime))
    throw invalidInput(`unknown runtime "${raw}": one of ${RUNTIMES.join(', ')}`, { field });
  return raw as Runtime;
}

export function checkAgentCommand(raw: string): string {
  const command = raw.trim();
  if (command === '') throw invalidInput('the agent command is empty', { field: 'command' });
  if (command.length > MAX_AGENT_COMMAND)
    throw invalidInput(`the agent command is ${command.length} characters; at most ${MAX_AGENT_COMMAND}`, {
      field: 'command',
    });
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(command))
    throw invalidInput('the agent command must be one line without control characters', { field: 'command' });
  return command;
}

function checkName(name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw invalidInput(
      `name "${name}" must match ${NAME_PATTERN.source} (lowercase letter first, 3–64 of a-z, 0-9, -)`,
      { field: 'name' },
    );
  }
}

export const principalDecider: Decider<Principal, PrincipalCommand, PrincipalEvent | ReputationEvent> = {
  snapshot: { name: 'principal', version: 1 },
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
