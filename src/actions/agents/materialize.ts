import type { App } from '../../app.js';
import { proposalDecider } from '../../commands/proposals.js';
import { spawnedAgent, type ParentGrant, type SpawnFacts } from '../../commands/proposal-spawn.js';
import { agentConfigHash } from '../../events/principals.js';
import { proposalStream, type AgentSpec } from '../../events/proposals.js';
import { type GoalRow } from '../../projections/goal-queries.js';
import { type ProposalRow } from '../../projections/proposal-queries.js';
import { getAgent, type AgentRow } from '../../projections/principal-queries.js';
import { scoresOf } from '../../projections/reputation.js';
import { who } from '../goals.js';
import { agentNameFacts, registerAgent } from '../principals.js';
import { reputationSettings, seedRecord } from '../reputation.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';
import { type KnownTools } from '../../commands/tool-scope.js';
import { sendSystemDirect } from '../notifications.js';

/**
 * An approved agent proposal becomes an agent, in the approval's command: the proposal decider decides the
 * approval (its caps and name checked again: the parent may have changed since the proposal), then the
 * agent is registered with its config hash, its reputation is seeded from its parent, and the proposer
 * hears its name and id.
 */

/** The proposing agent's grant, as the spawn rules read it (null: no such agent). */
export const parentGrant = (parent: AgentRow | null): ParentGrant | null =>
  parent && {
    agentId: parent.agentId,
    name: parent.name,
    tier: parent.tier,
    toolScope: parent.toolScope,
    spawnDepth: parent.spawnDepth,
    ownCommand: parent.ownCommand,
    ownRuntime: parent.ownRuntime,
  };

/** The facts a spawn of `name` by `parent` for `goal` is decided on. */
export function spawnFacts(
  app: App,
  parent: AgentRow | null,
  goal: GoalRow,
  name: string,
  knownTools?: KnownTools,
): SpawnFacts {
  return {
    parent: parentGrant(parent),
    maxSpawnDepth: goal.maxSpawnDepth,
    names: agentNameFacts(app, goal.ownerId, name),
    ...(knownTools ? { knownTools } : {}),
  };
}

/** Approval of an agent proposal, inside decideProposal's command: decide, create, seed, tell the proposer. */
export function materializeAgent(
  app: App,
  by: Speaker,
  proposal: ProposalRow,
  goal: GoalRow,
  auto: boolean,
  actor: CommandOptions,
): number {
  return app.engine.transact(actor, (uow) => {
    const spec = proposal.tree as AgentSpec;
    const parent = getAgent(app.engine.db, Number(proposal.proposerKey.slice('agent-'.length)));
    const agentId = uow.ids.next('agent');
    app.engine.handle(
      proposalDecider,
      proposalStream(proposal.proposalId),
      {
        type: 'ApproveProposal',
        by: who(by),
        auto,
        taskIds: [],
        agentId,
        spawn: spawnFacts(app, parent, goal, spec.name),
      },
      actor,
    );
    const data = spawnedAgent(parentGrant(parent)!, spec, goal.ownerId, goal.maxSpawnDepth);
    const configHash = agentConfigHash({ agentId: 0, ...data });
    const created = registerAgent(app, { ...data, configHash }, actor, undefined, agentId);
    seedFromParent(app, getAgent(app.engine.db, created.agentId)!, parent!, actor);
    sendSystemDirect(
      app,
      goal.ownerId,
      proposal.proposerKey,
      `Your proposal #${proposal.proposalId} was approved by ${by.name}: agent "${created.name}" (id ${created.agentId}) exists now, spawn depth ${data.spawnDepth}, tier ${data.tier}. Its owner holds its credentials; Colony starts it with them.`,
      { event: 'ProposalApproved', proposal_id: proposal.proposalId, agent_id: created.agentId, name: created.name },
      actor,
    );
    return created.agentId;
  }).value!;
}

/**
 * A new config's reputation starts from its parent's (or its previous config's) score in each of that
 * one's domains — a parent without evidence has the neutral score in `default` (commands/reputation.ts).
 */
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
  for (const d of domains.length > 0 ? domains : [{ domain: 'default', score: 0.5 }])
    seedRecord(app, agent, d.domain, { configHash: parentHash, score: d.score }, actor);
}
