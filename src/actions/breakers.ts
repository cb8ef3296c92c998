import type { App } from '../app.js';
import { breakerDecider } from '../commands/breakers.js';
import type { CommandOptions } from '../engine/handle.js';
import { notFound } from '../errors.js';
import {
  breakerStream,
  type BreakerEvidence,
  type BreakerKind,
  type BreakerOverrides,
  type BreakerReset,
} from '../events/breakers.js';
import type { StoredEvent } from '../engine/event.js';
import { openBreakersOf } from '../projections/breaker-queries.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { getAgent, type AgentRow } from '../projections/principal-queries.js';
import { liftCommand, tripMessage } from './breakers/notice.js';
import { postSystemMessage, sendSystemDirect } from './notifications.js';

/**
 * Breakers as commands. A detector (or another command's check) trips one for (agent, goal); the trip,
 * the owner's one DM and the goal channel's notice commit in one transaction, and only the first trip of
 * an open breaker writes anything. The owner lifts it (colony agents resume, the console).
 */
export interface Trip {
  agentId: number;
  /** null: the agent's work outside goals. */
  goalId: number | null;
  breaker: BreakerKind;
  /** Colony's own words: why it tripped (shown to the owner). */
  reason: string;
  evidence: BreakerEvidence;
}

const SYSTEM: CommandOptions = { actor: 'system' };

/**
 * Trips the breaker of (agent, goal): from now on the run gate `breaker` refuses the agent's runs on that
 * goal until its owner lifts it. Returns true when it tripped now, false when it was already open (then
 * nothing is written and the owner is not told again). Joins the caller's transaction if one is open — so
 * a caller whose own write is refused must trip it in a transaction of its own, after the refusal (a
 * trip inside a command that then throws rolls back with it).
 */
export function tripBreaker(app: App, trip: Trip, actor: CommandOptions = SYSTEM, by = 'system'): boolean {
  const db = app.engine.db;
  const r = app.engine.transact(actor, () => {
    const agent = getAgent(db, trip.agentId);
    if (!agent) throw notFound(`agent ${trip.agentId}`, { agent_id: trip.agentId });
    const goal = trip.goalId === null ? null : getGoal(db, trip.goalId);
    // A goal id may come from an agent's arguments: only a goal of the agent's own tenant is one to pause it on.
    if (trip.goalId !== null && goal?.ownerId !== agent.ownerId)
      throw notFound(`goal ${trip.goalId}`, { goal_id: trip.goalId });
    const data = { ...trip, ownerId: agent.ownerId, by };
    const { events } = app.engine.handle(
      breakerDecider,
      breakerStream(agent.agentId),
      { type: 'TripBreaker', trip: data },
      actor,
    );
    if (events.length === 0) return false;
    tellOwner(app, agent, goal, data, actor);
    return true;
  });
  return r.value ?? false;
}

function tellOwner(
  app: App,
  agent: AgentRow,
  goal: GoalRow | null,
  trip: Parameters<typeof tripMessage>[0]['trip'],
  actor: CommandOptions,
): void {
  const body = tripMessage({ agentName: agent.name, goal, trip });
  const metadata = {
    event: 'BreakerTripped',
    agent_id: agent.agentId,
    goal_id: trip.goalId,
    breaker: trip.breaker,
    run_ids: trip.evidence.runIds,
  };
  sendSystemDirect(app, agent.ownerId, `user-${agent.ownerId}`, body, metadata, actor);
  if (goal) postSystemMessage(app, goal.ownerId, `goal-${goal.slug}`, body, metadata, actor);
}

export interface Lifted {
  goalId: number | null;
  breaker: BreakerKind;
}

/**
 * The owner lifts the agent's open breakers: on one goal (null: outside goals) or all of them ('all').
 * Returns what was lifted (empty: nothing was open there). The agent's next wake-up on that goal runs.
 */
export function resumeAgent(
  app: App,
  ownerId: number,
  agentId: number,
  goalId: number | null | 'all',
  actor: CommandOptions,
): Lifted[] {
  const r = app.engine.transact(actor, () => {
    ownedAgent(app, ownerId, agentId);
    const open = openBreakersOf(app.engine.db, agentId);
    const { events } = app.engine.handle(
      breakerDecider,
      breakerStream(agentId),
      { type: 'ResetBreakers', agentId, goalId, byUserId: ownerId, by: `user-${ownerId}` },
      actor,
    );
    return events
      .filter((e): e is StoredEvent<BreakerReset> => e.type === 'BreakerReset')
      .map((e) => ({ goalId: e.data.goalId, breaker: open.find((b) => b.goalId === e.data.goalId)!.breaker }));
  });
  return r.value ?? [];
}

/** The owner sets the agent's own breaker thresholds (null: back to the default; 0: that detector off). */
export function configureBreakers(
  app: App,
  ownerId: number,
  agentId: number,
  changes: Partial<BreakerOverrides>,
  actor: CommandOptions,
): void {
  app.engine.transact(actor, () => {
    ownedAgent(app, ownerId, agentId);
    app.engine.handle(
      breakerDecider,
      breakerStream(agentId),
      { type: 'ConfigureBreakers', agentId, ownerId, changes, by: `user-${ownerId}` },
      actor,
    );
  });
}

function ownedAgent(app: App, ownerId: number, agentId: number): AgentRow {
  const agent = getAgent(app.engine.db, agentId);
  if (!agent || agent.ownerId !== ownerId) throw notFound(`agent ${agentId}`, { agent_id: agentId });
  return agent;
}

export { liftCommand };
