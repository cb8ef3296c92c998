import type { App } from '../../app.js';
import { proposalDecider } from '../../commands/proposals.js';
import { checkToolScope, type KnownTools } from '../../commands/tool-scope.js';
import { delegationCap, type Capped } from '../../commands/trust.js';
import { DomainError } from '../../errors.js';
import { agentConfigHash, type AgentRegistered } from '../../events/principals.js';
import { proposalStream, type AgentSpec } from '../../events/proposals.js';
import { type GoalRow } from '../../projections/goal-queries.js';
import { type ProposalRow } from '../../projections/proposal-queries.js';
import { getAgent, type AgentRow } from '../../projections/principals.js';
import { hasEvidence, scoresOf } from '../../projections/reputation.js';
import { who } from '../goals.js';
import { checkAgentName, registerAgent } from '../principals.js';
import { recordEvidence, reputationSettings, SEED_FRACTION } from '../reputation.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';
import { sendSystemDirect } from '../notifications.js';

/**
 * An approved agent proposal becomes an agent: the caps are checked again (the parent may have changed since
 * the proposal), the agent is registered with its config hash, its reputation is seeded from its parent, and
 * the proposer hears its name and id.
 */
function capsFor(parent: AgentRow, goal: GoalRow, spec: AgentSpec): Capped {
  return delegationCap(
    { tier: parent.tier, toolScope: parent.toolScope, budgetTokens: 0, budgetCents: 0, spawnDepth: parent.spawnDepth },
    { tier: spec.tier, toolScope: spec.toolScope, budgetTokens: 0, budgetCents: 0, spawnDepth: parent.spawnDepth + 1 },
    goal.maxSpawnDepth,
  );
}

/**
 * Throws the first thing that forbids the spawn: a tool that does not exist or only owners call (when the
 * registry's names are given: a typo is bad input, not a grant beyond the parent's, and gets a did-you-mean),
 * the depth, the cap (all violations in details), then the name.
 */
export function checkSpawn(
  app: App,
  parent: AgentRow,
  goal: GoalRow,
  spec: AgentSpec,
  knownTools?: KnownTools,
): Capped {
  if (knownTools) checkToolScope(spec.toolScope, knownTools);
  const capped = capsFor(parent, goal, spec);
  if (capped.depthExceeded) {
    throw new DomainError(
      'ErrSpawnDepthExceeded',
      `spawn depth ${parent.spawnDepth + 1} exceeds goal ${goal.goalId}'s max ${goal.maxSpawnDepth}`,
      { violations: capped.violations, spawn_depth: parent.spawnDepth + 1, max_spawn_depth: goal.maxSpawnDepth },
    );
  }
  if (capped.violations.length > 0) {
    throw new DomainError(
      'ErrDelegationCapExceeded',
      `the proposed agent exceeds ${parent.name}'s own grant: ${capped.violations.join('; ')}`,
      { violations: capped.violations },
    );
  }
  checkAgentName(app, goal.ownerId, spec.name);
  return capped;
}

/** Approval of an agent proposal, inside decideProposal's command: re-check, create, seed, tell the proposer. */
export function materializeAgent(
  app: App,
  by: Speaker,
  proposal: ProposalRow,
  goal: GoalRow,
  auto: boolean,
  actor: CommandOptions,
): number {
  const spec = proposal.tree as AgentSpec;
  const parent = getAgent(app.engine.db, Number(proposal.proposerKey.slice('agent-'.length)));
  if (!parent) throw new DomainError('ErrNotFound', `the proposing agent ${proposal.proposerName} no longer exists`);
  const capped = checkSpawn(app, parent, goal, spec);
  // The backend is the runner program (e.g. `claude -p`); what makes the child a specialist is its own
  // system prompt and scope, so it inherits its parent's backend command (its own; a parent that follows
  // the team's default command leaves the child following it too).
  const data: Omit<AgentRegistered['data'], 'agentId'> = {
    name: spec.name,
    ownerId: goal.ownerId,
    model: spec.model,
    systemPrompt: spec.systemPrompt,
    toolScope: [...capped.effective.toolScope],
    tier: capped.effective.tier as AgentSpec['tier'],
    command: parent.ownCommand,
    parentId: parent.agentId,
    spawnDepth: capped.effective.spawnDepth,
    skills: spec.skills,
    mcpServers: spec.mcpServers,
    subagents: spec.subagents,
  };
  const created = registerAgent(app, { ...data, configHash: agentConfigHash({ agentId: 0, ...data }) }, actor);
  app.engine.handle(
    proposalDecider,
    proposalStream(proposal.proposalId),
    { type: 'ApproveProposal', by: who(by), auto, taskIds: [], agentId: created.agentId },
    actor,
  );
  seedFromParent(app, getAgent(app.engine.db, created.agentId)!, parent, actor);
  sendSystemDirect(
    app,
    goal.ownerId,
    proposal.proposerKey,
    `Your proposal #${proposal.proposalId} was approved by ${by.name}: agent "${created.name}" (id ${created.agentId}) exists now, spawn depth ${data.spawnDepth}, tier ${data.tier}. Its owner holds its credentials; Colony starts it with them.`,
    { event: 'ProposalApproved', proposal_id: proposal.proposalId, agent_id: created.agentId, name: created.name },
    actor,
  );
  return created.agentId;
}

/** A new config starts at 70 % of its parent's (or its previous config's) score in each of that one's domains. */
export function seedFromParent(
  app: App,
  agent: AgentRow,
  parent: AgentRow,
  actor: CommandOptions,
  parentHash = parent.configHash,
): void {
  const { halfLifeDays } = reputationSettings();
  const now = app.engine.clock().toISOString();
  const domains = scoresOf(app.engine.db, parent.ownerId, parentHash, now, halfLifeDays);
  for (const d of domains.length > 0 ? domains : [{ domain: 'default', score: 0.5 }]) {
    // Reputation is keyed by config hash: a config that already has a record in the domain (an earlier agent with the same config) keeps it — seeding it again would inflate it.
    if (hasEvidence(app.engine.db, agent.ownerId, agent.configHash, d.domain)) continue;
    recordEvidence(app, agent, d.domain, SEED_FRACTION * d.score, `seed_from_parent:${parentHash}`, actor);
  }
}
