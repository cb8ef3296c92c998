import type { Router } from 'express';
import * as z from 'zod';
import { closeGoal, goalFor, resumeGoal } from '../actions/goals.js';
import { DomainError } from '../errors.js';
import { senderKind } from '../events/channels.js';
import { GOAL_STATUSES, type GoalStatus } from '../events/goals.js';
import type { McpContext } from '../mcp/context.js';
import { channelMessages } from '../projections/channel-queries.js';
import { goalList, goalSnapshot } from '../projections/goal-snapshot.js';
import { actor, body, Id, IntParam, ownerOf, parse, speakerOf } from './api-common.js';
import { eventsOfStreams, goalStreams } from '../projections/goal-streams.js';
import { ReplayCache } from './api-replay.js';
import { treeView } from './task-tree-view.js';
import { stalledGoalsTold } from '../projections/sweep-queries.js';
import { STALL_EVENT } from '../runtime/goal-stalls.js';

/**
 * Goals in the console: the list and one goal's snapshot (get_goal's shapes), its history — the positions
 * where its snapshot changes, the time-travel scrubber's stops —, its snapshot at any of them, its
 * channel's timeline, and the owner's resume and complete.
 */
const ListQuery = z.strictObject({
  status: z.enum(GOAL_STATUSES as [GoalStatus, ...GoalStatus[]]).optional(),
  limit: IntParam(1, 200).default(50),
  offset: IntParam(0, Number.MAX_SAFE_INTEGER).default(0),
});
const ResumeBody = z.strictObject({
  new_budget_dollars_cents: z.number().int().min(0).optional(),
  new_budget_tokens: z.number().int().min(0).optional(),
});
const CompleteBody = z.strictObject({
  status: z.enum(['completed', 'stuck', 'cancelled']),
  summary: z.string().trim().min(1).max(16_000),
});
const View = z.enum(['full', 'tree']).default('full');
/** Task ids the reader unfolded or folded by hand (`?view=tree` only). */
const Ids = z
  .string()
  .max(10_000)
  .regex(/^\d{1,15}(,\d{1,15})*$/, 'a comma-separated list of task ids')
  .transform((v) => new Set(v.split(',').map(Number)));
const SnapshotQuery = z.strictObject({ view: View, open: Ids.optional(), closed: Ids.optional() });
const ReplayQuery = SnapshotQuery.extend({ position: IntParam(0, Number.MAX_SAFE_INTEGER) });
const TimelineQuery = z.strictObject({
  before: IntParam(1, Number.MAX_SAFE_INTEGER).optional(),
  limit: IntParam(1, 200).default(50),
});

export function mountGoals(router: Router, ctx: McpContext): ReplayCache {
  const db = ctx.app.engine.db;
  const replays = new ReplayCache(db);
  const goalOf = (req: Parameters<typeof speakerOf>[0]) =>
    goalFor(ctx.app, speakerOf(req), parse(Id, req.params.id, 'id'));

  router.get('/goals', (req, res) => {
    const q = parse(ListQuery, req.query, 'query');
    const { goals, total } = goalList(db, speakerOf(req).tenant, {
      status: q.status ?? null,
      limit: q.limit,
      offset: q.offset,
    });
    res.json({
      goals: goals.map((v) => ({
        ...v,
        cost_totals: { tokens: v.spent_tokens, dollars_cents: v.spent_dollars_cents },
      })),
      total,
      limit: q.limit,
      offset: q.offset,
    });
  });
  // The attention list's stalled goals: drafts the owner was told nobody is planning (runtime/goal-stalls.ts).
  router.get('/attention/stalled-goals', (req, res) => {
    const goals = stalledGoalsTold(db, speakerOf(req).tenant, STALL_EVENT);
    res.json({ goals: goals.map((g) => ({ goal_id: g.goalId, title: g.title, told: g.told, told_at: g.toldAt })) });
  });
  router.get('/goals/:id', (req, res) => {
    const q = parse(SnapshotQuery, req.query, 'query');
    const snapshot = goalSnapshot(db, goalOf(req).goalId)!;
    res.json(q.view === 'tree' ? treeView(snapshot, q) : snapshot);
  });
  mountTimeTravel(router, ctx, goalOf, replays);
  router.get('/goals/:id/timeline', (req, res) => {
    const goal = goalOf(req);
    const q = parse(TimelineQuery, req.query, 'query');
    const page = channelMessages(db, goal.channelId, q.limit + 1, q.before ?? null).reverse();
    const messages = page.slice(0, q.limit).map((m) => ({
      id: m.messageId,
      from: m.fromName,
      from_kind: senderKind(m.fromKey),
      kind: (m.metadata?.kind as string | undefined) ?? m.kind,
      event: (m.metadata?.event as string | undefined) ?? null,
      body: m.body,
      created_at: m.createdAt,
      metadata: m.metadata,
    }));
    res.json({ messages, next_before: page.length > q.limit ? messages.at(-1)!.id : null });
  });
  mountGoalActions(router, ctx);
  return replays;
}

type GoalOf = (req: Parameters<typeof speakerOf>[0]) => ReturnType<typeof goalFor>;

/** The time-travel scrubber: the positions where a goal's snapshot changes, and its snapshot at any of them. */
function mountTimeTravel(router: Router, ctx: McpContext, goalOf: GoalOf, replays: ReplayCache): void {
  const db = ctx.app.engine.db;
  router.get('/goals/:id/history', (req, res) => {
    const goal = goalOf(req);
    // From GoalCreated on: its channel is created just before it, when there is no goal to show yet.
    const all = eventsOfStreams(db, goalStreams(db, goal));
    const stops = all.slice(
      Math.max(
        0,
        all.findIndex((e) => e.type === 'GoalCreated'),
      ),
    );
    res.json({
      head: ctx.app.engine.head().position,
      positions: stops.map((s) => s.position),
      at: stops.map((s) => s.at),
      types: stops.map((s) => s.type),
    });
  });
  router.get('/goals/:id/replay', (req, res) => {
    const goal = goalOf(req);
    const q = parse(ReplayQuery, req.query, 'query');
    const { position } = q;
    const head = ctx.app.engine.head().position;
    if (position > head)
      throw new DomainError('ErrInvalidInput', `query.position: the log ends at position ${head}`, {
        field: 'query.position',
        head,
      });
    const snapshot = replays.snapshotAt(goal.goalId, position);
    if (!snapshot)
      throw new DomainError('ErrGoalNotFound', `goal ${goal.goalId} did not exist yet at position ${position}`, {
        goal_id: goal.goalId,
        position,
      });
    res.json(q.view === 'tree' ? treeView(snapshot, q) : snapshot);
  });
}

/** The owner's actions on a goal: resume it (with new budgets) and complete it. */
function mountGoalActions(router: Router, ctx: McpContext): void {
  router.post('/goals/:id/resume', (req, res) => {
    ownerOf(req, 'resumes goals');
    const id = parse(Id, req.params.id, 'id');
    const b = body(ResumeBody, req);
    const g = resumeGoal(
      ctx.app,
      speakerOf(req),
      id,
      { tokens: b.new_budget_tokens, cents: b.new_budget_dollars_cents },
      actor(req),
    );
    res.json({ goal_id: g.goalId, status: g.status });
  });
  router.post('/goals/:id/complete', (req, res) => {
    ownerOf(req, 'completes goals here');
    const id = parse(Id, req.params.id, 'id');
    const b = body(CompleteBody, req);
    const g = closeGoal(ctx.app, speakerOf(req), id, b.status, b.summary, actor(req));
    res.json({ goal_id: g.goalId, status: g.status, completion_summary: g.completionSummary });
  });
}
