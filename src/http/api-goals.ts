import type { Router } from 'express';
import * as z from 'zod';
import { goalFor } from '../actions/goals.js';
import { DomainError } from '../errors.js';
import { senderKind } from '../events/channels.js';
import { GOAL_STATUSES, type GoalStatus } from '../events/goals.js';
import type { McpContext } from '../mcp/context.js';
import { channelMessages } from '../projections/channel-queries.js';
import { goalList, goalSnapshot } from '../projections/goal-snapshot.js';
import { pendingTreeProposal } from '../projections/proposal-queries.js';
import { taskCountsOfGoals } from '../projections/task-queries.js';
import { Id, IntParam, parse, speakerOf } from './api-common.js';
import { eventsOfStreams, goalStreams } from '../projections/goal-streams.js';
import { ReplayCache } from './api-replay.js';
import { treeView } from './task-tree-view.js';
import { mountGoalActions } from './api-goal-actions.js';
import { mountGoalOutcome } from './api-goal-outcome.js';

/**
 * Goals in the console: the list and one goal's snapshot (get_goal's shapes), its history — the positions
 * where its snapshot changes, the time-travel scrubber's stops —, its snapshot at any of them, and its
 * channel's timeline. What it produced: api-goal-outcome.ts; creating, posting, resuming and closing:
 * api-goal-actions.ts.
 */
const ListQuery = z.strictObject({
  status: z.enum(GOAL_STATUSES as [GoalStatus, ...GoalStatus[]]).optional(),
  limit: IntParam(1, 200).default(50),
  offset: IntParam(0, Number.MAX_SAFE_INTEGER).default(0),
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
  /** `messages`: what people and agents wrote; `activity`: Colony's notices of every transition; `all`. */
  show: z.enum(['all', 'messages', 'activity']).default('all'),
});
const FROM = { all: 'all', messages: 'people', activity: 'system' } as const;

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
        // A draft whose tree waits for the owner is not one nobody works on: the list says which.
        pending_proposal_id: v.status === 'draft' ? (pendingTreeProposal(db, v.id)?.proposalId ?? null) : null,
      })),
      total,
      limit: q.limit,
      offset: q.offset,
    });
  });
  router.get('/goals/:id', (req, res) => {
    const q = parse(SnapshotQuery, req.query, 'query');
    const snapshot = goalSnapshot(db, goalOf(req).goalId)!;
    // The console's progress: how many of its tasks are in each status (the tree view sends only some rows).
    const statuses = taskCountsOfGoals(db, [snapshot.goal.id]).get(snapshot.goal.id) ?? {};
    res.json(q.view === 'tree' ? { ...treeView(snapshot, q), task_statuses: statuses } : snapshot);
  });
  mountTimeTravel(router, ctx, goalOf, replays);
  router.get('/goals/:id/timeline', (req, res) => {
    const goal = goalOf(req);
    const q = parse(TimelineQuery, req.query, 'query');
    const page = channelMessages(db, goal.channelId, q.limit + 1, q.before ?? null, FROM[q.show]).reverse();
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
  mountGoalOutcome(router, ctx);
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
