import type { App } from '../app.js';
import { goalDecider } from '../commands/goals.js';
import { slugify } from '../commands/task-tree.js';
import { DomainError } from '../errors.js';
import {
  DEFAULT_MAX_REJECTIONS,
  goalChannelName,
  goalStream,
  type ApprovalMode,
  type Budgets,
} from '../events/goals.js';
import { getGoal, goalTotals, slugTaken, type GoalRow } from '../projections/goal-queries.js';
import { createPublicChannel } from './channels.js';
import { resolveCoordinator } from './coordinator.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Goal commands shared by the MCP tools, the REST API and the CLI: each is one transaction. A goal is
 * visible only inside its owner's tenant; any other caller gets ErrGoalNotFound, never a hint. Who may
 * do what is the goal decider's to say (commands/goals.ts): these functions find the goal and route.
 */
export const agentIdOf = (by: Speaker): number | null =>
  by.key.startsWith('agent-') ? Number(by.key.slice('agent-'.length)) : null;
export const who = (by: Speaker) => ({ key: by.key, name: by.name });

export function goalFor(app: App, by: Speaker, goalId: number): GoalRow {
  const goal = getGoal(app.engine.db, goalId);
  if (!goal || (goal.ownerId !== by.tenant && by.key !== 'system'))
    throw new DomainError('ErrGoalNotFound', `goal ${goalId} not found`, { goal_id: goalId });
  return goal;
}

export interface NewGoal {
  title: string;
  description: string;
  budgets: Budgets;
  maxSpawnDepth: number;
  coordinatorConfig: string;
  approvalMode: ApprovalMode;
  /** Done only with evidence (default on) and the retry limit of rejected hand-ins (default 2). */
  requireEvidence?: boolean;
  maxRejections?: number;
}
export interface CreatedGoal {
  goalId: number;
  slug: string;
  channelId: number;
  coordinatorAgentId: number;
  status: 'draft';
}

export function createGoal(app: App, by: Speaker, input: NewGoal, actor: CommandOptions): CreatedGoal {
  const result = app.engine.transact(actor, (uow) => {
    const db = app.engine.db;
    const coordinator = resolveCoordinator(app, by.tenant, input.coordinatorConfig, actor);
    const slug = freeSlug(db, by.tenant, slugify(input.title));
    const channelId = createPublicChannel(app, by.tenant, goalChannelName(slug), `Goal: ${input.title}`, actor);
    const goalId = uow.ids.next('goal');
    app.engine.handle(
      goalDecider,
      goalStream(goalId),
      {
        type: 'CreateGoal',
        goal: {
          goalId,
          ownerId: by.tenant,
          slug,
          title: input.title,
          description: input.description,
          channelId,
          coordinatorAgentId: coordinator.agentId,
          coordinatorTemplate: input.coordinatorConfig,
          budgets: input.budgets,
          maxSpawnDepth: input.maxSpawnDepth,
          approvalMode: input.approvalMode,
          requireEvidence: input.requireEvidence ?? true,
          maxRejections: input.maxRejections ?? DEFAULT_MAX_REJECTIONS,
          by: by.name,
        },
        by: who(by),
      },
      actor,
    );
    return { goalId, slug, channelId, coordinatorAgentId: coordinator.agentId, status: 'draft' as const };
  });
  return result.value ?? replayed(app, result.events);
}

/** A retried create_goal (same idempotency key) answers with the goal the first call made. */
function replayed(app: App, events: readonly { type: string; data: unknown }[]): CreatedGoal {
  const created = events.find((e) => e.type === 'GoalCreated')!.data as {
    goalId: number;
    slug: string;
    channelId: number;
    coordinatorAgentId: number;
  };
  return {
    goalId: created.goalId,
    slug: created.slug,
    channelId: created.channelId,
    coordinatorAgentId: created.coordinatorAgentId,
    status: 'draft',
  };
}

/**
 * The first of `base`, `base-2` … `base-99` no goal of the owner uses. It names the goal's channel, which
 * is created before the goal, so a title with none left is refused here (ErrSlugTaken).
 */
function freeSlug(db: App['engine']['db'], ownerId: number, base: string): string {
  if (!slugTaken(db, ownerId, base)) return base;
  for (let n = 2; n <= 99; n += 1) if (!slugTaken(db, ownerId, `${base}-${n}`)) return `${base}-${n}`;
  throw new DomainError('ErrSlugTaken', `goal slugs ${base} … ${base}-99 are all taken: choose another title`, {
    slug: base,
  });
}

/** Switches a goal between human and automatic approval of its proposals (its owner). */
export function setApprovalMode(
  app: App,
  by: Speaker,
  goalId: number,
  to: ApprovalMode,
  actor: CommandOptions,
): GoalRow {
  app.engine.transact(actor, () => {
    goalFor(app, by, goalId);
    app.engine.handle(goalDecider, goalStream(goalId), { type: 'SetApprovalMode', to, by: who(by) }, actor);
  });
  return getGoal(app.engine.db, goalId)!;
}

/** resume_goal: sets a paused (or stuck) goal active again, optionally with new budgets (its owner). */
export function resumeGoal(
  app: App,
  by: Speaker,
  goalId: number,
  budgets: Partial<Budgets>,
  actor: CommandOptions,
): GoalRow {
  app.engine.transact(actor, () => {
    goalFor(app, by, goalId);
    const t = goalTotals(app.engine.db, goalId);
    app.engine.handle(
      goalDecider,
      goalStream(goalId),
      { type: 'ResumeGoal', budgets, spent: { tokens: t.spentTokens, cents: t.spentCents }, by: who(by) },
      actor,
    );
  });
  return getGoal(app.engine.db, goalId)!;
}
