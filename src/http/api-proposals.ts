import type { Router } from 'express';
import * as z from 'zod';
import { proposalView } from '../actions/proposals/card.js';
import { decideProposal } from '../actions/proposals.js';
import type { McpContext } from '../mcp/context.js';
import { proposalsOf } from '../projections/proposal-queries.js';
import { actor, body, Id, ownerOf, parse, speakerOf } from './api-common.js';

/**
 * Proposals in the console: the tenant's task-tree and agent proposals by status, each with every
 * command line approving it lets run on the host (a tree's verifier recipes; a spawned agent's backend,
 * which it inherits from its proposer), and the owner's approve and reject — the same command as
 * `colony approve|reject` and the owner's reaction in `#approvals`.
 */
const ListQuery = z.strictObject({ status: z.enum(['pending', 'approved', 'rejected']).default('pending') });
const RejectBody = z.strictObject({ reason: z.string().trim().min(1).max(2000) });
const MAX_LISTED = 200;

export function mountProposals(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  router.get('/proposals', (req, res) => {
    const q = parse(ListQuery, req.query, 'query');
    res.json({
      proposals: proposalsOf(db, speakerOf(req).tenant, q.status, MAX_LISTED).map((p) => proposalView(db, p)),
    });
  });
  router.post('/proposals/:id/approve', (req, res) => {
    ownerOf(req, 'approves proposals');
    const id = parse(Id, req.params.id, 'id');
    body(z.strictObject({}), req);
    const { proposal, taskIds } = decideProposal(ctx.app, speakerOf(req), id, 'approve', '', actor(req));
    res.json({
      proposal_id: proposal.proposalId,
      status: proposal.status,
      task_ids: taskIds,
      ...(proposal.agentId !== null ? { agent_id: proposal.agentId } : {}),
    });
  });
  router.post('/proposals/:id/reject', (req, res) => {
    ownerOf(req, 'rejects proposals');
    const id = parse(Id, req.params.id, 'id');
    const { reason } = body(RejectBody, req);
    const { proposal } = decideProposal(ctx.app, speakerOf(req), id, 'reject', reason, actor(req));
    res.json({ proposal_id: proposal.proposalId, status: proposal.status });
  });
}
