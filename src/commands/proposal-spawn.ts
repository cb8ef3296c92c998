import { DomainError } from '../errors.js';
import type { AgentRegistered, Runtime, Tier } from '../events/principals.js';
import type { AgentSpec } from '../events/proposals.js';
import { checkAgentName, type AgentNameFacts } from './agent-names.js';
import { checkToolScope, type KnownTools } from './tool-scope.js';
import { delegationCap, type Capped } from './trust.js';

/**
 * Spawning: an agent proposes a child for a task of a goal. The caps are decided when the proposal is
 * made and again when the owner approves it (the parent may have changed since): a tool scope that
 * names only agent tools that exist (when the tool registry's names are given: a typo is bad input, not
 * a grant beyond the parent's, and gets a did-you-mean), the spawn depth against the goal's maximum,
 * the delegation cap (a child never gets more than its parent: every violation in details), then the name.
 */
export interface ParentGrant {
  agentId: number;
  name: string;
  tier: Tier;
  toolScope: readonly string[];
  spawnDepth: number;
  /** The parent's own backend command, which its child inherits. */
  ownCommand: string | null;
  /** The parent's own runtime, which its child inherits as it inherits the command. */
  ownRuntime: Runtime | null;
}
export interface SpawnFacts {
  /** The proposing agent, the parent of the agent to be (null: the proposer is not an agent, or no longer exists). */
  parent: ParentGrant | null;
  maxSpawnDepth: number;
  names: AgentNameFacts;
  /** The tool registry's names; given when an agent proposes, so the scope is checked against them first. */
  knownTools?: KnownTools;
}

const capsOf = (parent: ParentGrant, spec: AgentSpec, maxDepth: number): Capped =>
  delegationCap(
    { tier: parent.tier, toolScope: parent.toolScope, budgetTokens: 0, budgetCents: 0, spawnDepth: parent.spawnDepth },
    { tier: spec.tier, toolScope: spec.toolScope, budgetTokens: 0, budgetCents: 0, spawnDepth: parent.spawnDepth + 1 },
    maxDepth,
  );

/** Throws the first thing that forbids the spawn of `spec` by `parent` for goal `goalId`. */
export function checkSpawn(parent: ParentGrant, spec: AgentSpec, f: SpawnFacts, goalId: number): void {
  if (f.knownTools) checkToolScope(spec.toolScope, f.knownTools);
  const capped = capsOf(parent, spec, f.maxSpawnDepth);
  if (capped.depthExceeded) {
    throw new DomainError(
      'ErrSpawnDepthExceeded',
      `spawn depth ${parent.spawnDepth + 1} exceeds goal ${goalId}'s max ${f.maxSpawnDepth}`,
      { violations: capped.violations, spawn_depth: parent.spawnDepth + 1, max_spawn_depth: f.maxSpawnDepth },
    );
  }
  if (capped.violations.length > 0) {
    throw new DomainError(
      'ErrDelegationCapExceeded',
      `the proposed agent exceeds ${parent.name}'s own grant: ${capped.violations.join('; ')}`,
      { violations: capped.violations },
    );
  }
  checkAgentName(spec.name, f.names);
}

/**
 * The agent an approved spawn registers: the proposed config within the parent's grant, one level deeper.
 * The backend is the runner program (e.g. `claude -p`); what makes the child a specialist is its own system
 * prompt and scope, so it inherits its parent's own backend command (a parent that follows the team's
 * default command leaves the child following it too).
 */
export function spawnedAgent(
  parent: ParentGrant,
  spec: AgentSpec,
  ownerId: number,
  maxDepth: number,
): Omit<AgentRegistered['data'], 'agentId' | 'configHash'> {
  const { effective } = capsOf(parent, spec, maxDepth);
  return {
    name: spec.name,
    ownerId,
    model: spec.model,
    systemPrompt: spec.systemPrompt,
    toolScope: [...effective.toolScope],
    tier: effective.tier as Tier,
    command: parent.ownCommand,
    runtime: parent.ownRuntime,
    parentId: parent.agentId,
    spawnDepth: effective.spawnDepth,
    skills: spec.skills,
    mcpServers: spec.mcpServers,
    subagents: spec.subagents,
  };
}
