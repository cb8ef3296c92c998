import * as z from 'zod';
import { closeGoal } from '../../actions/goal-close.js';
import { createGoal, goalFor, resumeGoal, type NewGoal } from '../../actions/goals.js';
import { proposeTaskTree } from '../../actions/proposals.js';
import { DEFAULT_MAX_REJECTIONS, GOAL_STATUSES, MAX_REJECTIONS_CAP, type GoalStatus } from '../../events/goals.js';
import { goalList, goalSnapshot } from '../../projections/goal-snapshot.js';
import { pathPolicyFor } from '../../actions/projects/paths.js';
import { defineTool, type AnyTool } from '../tool.js';
import { Budget, checkedTree, TaskNode } from './task-tree-input.js';
import { speaker } from '../../events/principals.js';
import { goalSettingTools } from './goal-settings.js';

/**
 * Goals and task-tree proposals: create_goal, propose_task_tree, get_goal,
 * list_goals, complete_goal, and the owner's resume_goal (its settings: goal-settings.ts).
 */

/** create_goal's arguments with their defaults; `colony goals create` checks its flags with it too, so both make the same goal. */
export const CreateGoalInput = z.strictObject({
  title: z.string().trim().min(3).max(200),
  description: z.string().trim().min(10).max(16_000),
  budget_dollars_cents: Budget.optional(),
  budget_tokens: Budget.optional(),
  max_spawn_depth: z.number().int().min(1).max(10).default(3),
  coordinator_config: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .default('default')
    .describe('Named coordinator template; defaults to "default"'),
  approval_mode: z.enum(['human', 'auto']).default('human'),
  require_evidence: z
    .boolean()
    .default(true)
    .describe('Done only with evidence: a leaf is done only by a recipe, an independent peer or the owner'),
  max_rejections: z
    .number()
    .int()
    .min(0)
    .max(MAX_REJECTIONS_CAP)
    .default(DEFAULT_MAX_REJECTIONS)
    .describe('Rejected hand-ins sent back to the assignee with the feedback before the next one fails the task'),
});

export const newGoal = (a: z.infer<typeof CreateGoalInput>): NewGoal => ({
  title: a.title,
  description: a.description,
  budgets: { tokens: a.budget_tokens ?? null, cents: a.budget_dollars_cents ?? null },
  maxSpawnDepth: a.max_spawn_depth,
  coordinatorConfig: a.coordinator_config,
  approvalMode: a.approval_mode,
  requireEvidence: a.require_evidence,
  maxRejections: a.max_rejections,
});

const create = defineTool({
  name: 'create_goal',
  title: 'Create a goal',
  description:
    "Creates a high-level goal (status draft) owned by your owner, with its #goal-<slug> channel, and assigns the coordinator (coordinator_config: \"default\" — the owner's pre-built coordinator agent, created on first use — or the name of one of your owner's agents). The coordinator is woken to propose a task tree. Budgets are caps in tokens and US cents (omit for no cap). approval_mode \"auto\" approves proposals at once (still recorded) and is the owner's choice only: an agent asking for it gets ErrApprovalModeForbidden. require_evidence (default true): a leaf task is done only by a verdict from someone other than its author — a recipe, a peer outside its lineage, or the owner (an auto-verified leaf waits for the owner's verdict) — and the goal completes only when every leaf is so done (false is the owner's choice only: an agent asking for it gets ErrForbidden); max_rejections (default 2): a rejected hand-in goes back to its assignee with the verifier's feedback that many times, then the task fails and goes to the owner. Errors: ErrInvalidInput, ErrNotFound (unknown coordinator_config), ErrSlugTaken, ErrApprovalModeForbidden, ErrForbidden.",
  trust: 'write',
  surface: 'agent',
  module: 'goals',
  input: CreateGoalInput,
  output: z.object({
    goal_id: z.number().int(),
    slug: z.string(),
    channel_id: z.number().int(),
    coordinator_agent_id: z.number().int(),
    status: z.string(),
  }),
  handler(ctx, a) {
    const g = createGoal(ctx.app, speaker(ctx.caller), newGoal(a), ctx.command);
    return {
      goal_id: g.goalId,
      slug: g.slug,
      channel_id: g.channelId,
      coordinator_agent_id: g.coordinatorAgentId,
      status: g.status,
    };
  },
});

const propose = defineTool({
  name: 'propose_task_tree',
  title: 'Propose a task tree',
  description:
    "Proposes the decomposition of a goal into a tree of tasks (the coordinator's or owner's call). Nothing is created yet: the whole tree is checked, posted as one proposal to #approvals, and materialized atomically when the owner reacts approve (at once in auto mode, unless you are a supervised agent: its proposals always wait for the owner); a rejection arrives as a DM with the reason. Node: title 3–200, description ≥ 10, acceptance_criteria, billing_code, budget_tokens, budget_dollars_cents (a child's budget must fit in what its parent has left), verifier_config {kind:auto}|{kind:peer,agent_id}|{kind:command,recipe,cwd?} — a command verifier runs one of your owner's registered recipes (list_verifiers), never a command you write; a peer verifier must be independent of you (not you, not an agent in your spawn lineage); children (at most 32 levels). Errors: ErrBudgetInsufficient, ErrAncestryOverflow, ErrProposalPending (one pending tree per goal), ErrNotCoordinator, ErrGoalNotFound, ErrNotFound (a peer verifier that is not an agent of the goal's owner), ErrSelfVerification, ErrRawCommandRefused, ErrVerifierNotFound (no such recipe), ErrPathOutsideRoots (command cwd).",
  trust: 'write',
  surface: 'agent',
  module: 'goals',
  input: z.strictObject({
    goal_id: z.number().int().positive(),
    reasoning: z.string().max(16_000).default(''),
    tree: TaskNode,
  }),
  output: z.object({
    proposal_message_id: z.number().int(),
    channel_id: z.number().int(),
    proposal_id: z.number().int(),
    status: z.enum(['pending', 'approved']),
    task_ids: z.array(z.number().int()),
  }),
  handler(ctx, a) {
    const tree = checkedTree(a.tree, pathPolicyFor(ctx.app), 'tree');
    const p = proposeTaskTree(ctx.app, speaker(ctx.caller), a.goal_id, a.reasoning, tree, ctx.command);
    return {
      proposal_message_id: p.proposalMessageId,
      channel_id: p.channelId,
      proposal_id: p.proposalId,
      status: p.approved ? ('approved' as const) : ('pending' as const),
      task_ids: p.taskIds,
    };
  },
});

const Snapshot = z.object({
  goal: z.record(z.string(), z.unknown()),
  tasks_tree: z.array(z.record(z.string(), z.unknown())),
  spawned_agents: z.array(z.record(z.string(), z.unknown())),
  cost_breakdown: z.record(z.string(), z.unknown()),
  recent_events: z.array(z.record(z.string(), z.unknown())),
});

const get = defineTool({
  name: 'get_goal',
  title: 'Get a goal',
  description:
    'The full snapshot of one goal: goal (status, budgets, spend, coordinator, channel), tasks_tree (every task with status, assignee, lease, budgets, spend and subtree rollup, nested by parent), spawned_agents, cost_breakdown (total and by billing code) and recent_events (the last 50 messages of its channel). Errors: ErrGoalNotFound.',
  trust: 'read',
  surface: 'agent',
  module: 'goals',
  input: z.strictObject({ goal_id: z.number().int().positive() }),
  output: Snapshot,
  handler(ctx, a) {
    goalFor(ctx.app, speaker(ctx.caller), a.goal_id);
    return goalSnapshot(ctx.app.engine.db, a.goal_id)! as unknown as z.infer<typeof Snapshot>;
  },
});

const list = defineTool({
  name: 'list_goals',
  title: 'List goals',
  description:
    "Lists your team's goals, newest first, each with status, budgets, spend, task count and last activity. Filter by status.",
  trust: 'read',
  surface: 'agent',
  module: 'goals',
  input: z.strictObject({
    status: z.enum(GOAL_STATUSES as [GoalStatus, ...GoalStatus[]]).optional(),
    limit: z.number().int().min(1).max(200).default(50),
    offset: z.number().int().min(0).default(0),
  }),
  output: z.object({ goals: z.array(z.record(z.string(), z.unknown())), total: z.number().int() }),
  handler(ctx, a) {
    return goalList(ctx.app.engine.db, speaker(ctx.caller).tenant, {
      status: a.status ?? null,
      limit: a.limit,
      offset: a.offset,
    });
  },
});

const complete = defineTool({
  name: 'complete_goal',
  title: 'Complete a goal',
  description:
    "Closes a goal as completed, stuck or cancelled with a summary (the owner or the goal's coordinator). Calling it again with the same status changes nothing. A stuck goal can be resumed by the owner. A goal that requires evidence completes only when each of its leaf tasks is done by a verdict that counts (or cancelled). Errors: ErrGoalNotFound, ErrForbidden, ErrIllegalTransition (e.g. a completed goal), ErrUnverifiedLeaves (the leaves still waiting, in details.tasks).",
  trust: 'write',
  surface: 'agent',
  module: 'goals',
  input: z.strictObject({
    goal_id: z.number().int().positive(),
    status: z.enum(['completed', 'stuck', 'cancelled']),
    summary: z.string().trim().min(1).max(16_000),
  }),
  output: z.object({ goal_id: z.number().int(), status: z.string() }),
  handler(ctx, a) {
    const g = closeGoal(ctx.app, speaker(ctx.caller), a.goal_id, a.status, a.summary, ctx.command);
    return { goal_id: g.goalId, status: g.status };
  },
});

const resume = defineTool({
  name: 'resume_goal',
  title: 'Resume a goal',
  description:
    'Owner only. Sets a paused (or stuck) goal active again, optionally with new budgets; the 80 % alert re-arms when spend is below 80 % of the new budget. Refused with ErrGoalBudgetExceeded while spend is still at or over a budget. Errors: ErrGoalNotFound, ErrIllegalTransition.',
  trust: 'write',
  surface: 'owner',
  module: 'goals',
  input: z.strictObject({
    goal_id: z.number().int().positive(),
    new_budget_dollars_cents: Budget.optional(),
    new_budget_tokens: Budget.optional(),
  }),
  output: z.object({ goal_id: z.number().int(), status: z.string() }),
  handler(ctx, a) {
    const g = resumeGoal(
      ctx.app,
      speaker(ctx.caller),
      a.goal_id,
      { tokens: a.new_budget_tokens, cents: a.new_budget_dollars_cents },
      ctx.command,
    );
    return { goal_id: g.goalId, status: g.status };
  },
});

export const goalTools: readonly AnyTool[] = [create, propose, get, list, complete, resume, ...goalSettingTools];
