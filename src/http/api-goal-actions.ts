import type { Router } from 'express';
import * as z from 'zod';
import { sendToChannel } from '../actions/channels.js';
import { closeGoal } from '../actions/goal-close.js';
import { createGoal, goalFor, resumeGoal } from '../actions/goals.js';
import type { McpContext } from '../mcp/context.js';
import { CreateGoalInput, newGoal } from '../mcp/tools/goals.js';
import { actor, body, Id, ownerOf, parse, speakerOf } from './api-common.js';

/**
 * The owner's actions on goals in the console: create one (create_goal's arguments and defaults, so the
 * console, the CLI and MCP make the same goal), post in its channel (send_message to the goal's channel:
 * an @mention wakes that agent as any message does), resume it with new budgets (an active goal only takes
 * the budgets — how a budget alert is answered) and close it.
 */
const ResumeBody = z.strictObject({
  new_budget_dollars_cents: z.number().int().min(0).optional(),
  new_budget_tokens: z.number().int().min(0).optional(),
});
const CompleteBody = z.strictObject({
  status: z.enum(['completed', 'stuck', 'cancelled']),
  summary: z.string().trim().min(1).max(16_000),
});
const MessageBody = z.strictObject({
  body: z.string().trim().min(1).max(16_000),
  reply_to: z.number().int().positive().optional(),
});

export function mountGoalActions(router: Router, ctx: McpContext): void {
  router.post('/goals', (req, res) => {
    ownerOf(req, 'creates goals here');
    const g = createGoal(ctx.app, speakerOf(req), newGoal(body(CreateGoalInput, req)), actor(req));
    res.status(201).json({ goal_id: g.goalId, slug: g.slug, channel_id: g.channelId, status: g.status });
  });
  router.post('/goals/:id/messages', (req, res) => {
    ownerOf(req, 'posts in goal channels here');
    const goal = goalFor(ctx.app, speakerOf(req), parse(Id, req.params.id, 'id'));
    const b = body(MessageBody, req);
    const message = { body: b.body, subject: null, priority: 5, metadata: null, replyTo: b.reply_to ?? null };
    const sent = sendToChannel(ctx.app, speakerOf(req), { id: goal.channelId }, message, actor(req));
    res.status(201).json({ message_id: sent.messageId, channel_id: sent.channelId });
  });
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
