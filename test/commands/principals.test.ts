import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { principalDecider, type PrincipalCommand } from '../../src/commands/principals.js';
import { RESERVED_AGENT_NAMES } from '../../src/commands/agent-names.js';
import type { AgentConfigUpdated, AgentRegistered, UserCreated } from '../../src/events/principals.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The principal decider's rules on names and config changes, given/when/then: a user name is taken once;
 * an agent never takes a reserved word, a person's name of its team or another agent's name; an agent
 * config update that changes nothing records nothing. The names in use are facts of other streams.
 */
const userCreated: UserCreated = { type: 'UserCreated', data: { userId: 1, name: 'owner', role: 'owner' } };
const agent: AgentRegistered['data'] = {
  agentId: 3,
  name: 'writer',
  ownerId: 1,
  model: 'm',
  systemPrompt: 'You write.',
  toolScope: ['send_message'],
  tier: 'supervised',
  command: null,
  parentId: null,
  spawnDepth: 0,
};
const registered: AgentRegistered = { type: 'AgentRegistered', data: agent };
const register = (name: string, names = { ownerName: 'owner', taken: false }): PrincipalCommand => ({
  type: 'RegisterAgent',
  agent: { ...agent, name },
  names,
});

const config: AgentConfigUpdated['data'] = {
  agentId: 3,
  model: 'm',
  systemPrompt: 'You write.',
  toolScope: ['send_message'],
  skills: [],
  mcpServers: [],
  subagents: [],
  tier: 'supervised',
  command: null,
  configHash: 'h1',
  previousHash: 'h1',
};
const update = (changes: Partial<AgentConfigUpdated['data']>): PrincipalCommand => ({
  type: 'UpdateAgentConfig',
  config: { ...config, ...changes },
  before: { tier: 'supervised', command: null, runtime: null },
});

const principal = spec(principalDecider);

describe('CreateUser: a user name is taken once', () => {
  it('a free name creates the user', () => {
    principal.given([]).when({ type: 'CreateUser', userId: 1, name: 'owner', nameTaken: false }).then([userCreated]);
  });
  it('a taken name is ErrPrincipalExists, before anything else', () => {
    principal
      .given([])
      .when({ type: 'CreateUser', userId: 1, name: 'owner', nameTaken: true })
      .thenThrows('ErrPrincipalExists', 'a user named owner already exists');
    principal
      .given([])
      .when({ type: 'CreateUser', userId: 1, name: 'No Pattern', nameTaken: true })
      .thenThrows('ErrPrincipalExists');
  });
});

describe("RegisterAgent: an agent's name", () => {
  it('a free name registers the agent', () => {
    principal.given([]).when(register('writer')).then([registered]);
  });

  it('is never a reserved word (ErrAgentNameReserved)', () => {
    for (const name of ['system', 'owner', 'admin', 'everyone']) {
      assert.ok(RESERVED_AGENT_NAMES.has(name));
      const e = principal
        .given([])
        .when(register(name))
        .thenThrows('ErrAgentNameReserved', `"${name}" cannot name an agent`);
      assert.deepEqual(e.details, { name });
    }
  });

  it('is never the name of a person of the team (ErrAgentNameReserved)', () => {
    principal
      .given([])
      .when(register('ada', { ownerName: 'ada', taken: false }))
      .thenThrows('ErrAgentNameReserved');
  });

  it("is never another agent's of the team (ErrAgentNameTaken), checked before the name's pattern", () => {
    const e = principal
      .given([])
      .when(register('writer', { ownerName: 'owner', taken: true }))
      .thenThrows('ErrAgentNameTaken', 'an agent named writer already exists');
    assert.deepEqual(e.details, { name: 'writer' });
    principal
      .given([])
      .when(register('x', { ownerName: 'owner', taken: true }))
      .thenThrows('ErrAgentNameTaken');
  });
});

describe('UpdateAgentConfig: a change of nothing records nothing', () => {
  it('the same hash, tier and own command: nothing', () => {
    principal.given([registered]).when(update({})).thenNothingHappened();
  });
  it('a new hash, tier or own command is recorded', () => {
    for (const changes of [{ configHash: 'h2', model: 'n' }, { tier: 'assisted' as const }, { command: 'claude -p' }]) {
      principal
        .given([registered])
        .when(update(changes))
        .then([{ type: 'AgentConfigUpdated', data: { ...config, ...changes } }]);
    }
  });
  it('the no-change rule comes before the checks of the scope', () => {
    principal
      .given([registered])
      .when(update({ toolScope: [] }))
      .thenNothingHappened();
    principal
      .given([registered])
      .when(update({ toolScope: [], configHash: 'h3' }))
      .thenThrows('ErrInvalidInput', 'at least one tool');
  });
});
