import * as z from 'zod';
import { approvalCardOf, approvalCardText } from '../../actions/proposals/approval-card.js';
import { DomainError } from '../../errors.js';
import { oldestPendingProposal } from '../../projections/proposal-pending.js';
import { getProposal } from '../../projections/proposal-queries.js';
import { APPROVAL_CARD_URI, approvalCardToolMeta } from '../apps/approval-card.js';
import { defineTool, type AnyTool } from '../tool.js';
import { speaker } from '../../events/principals.js';

/**
 * review_proposal: the owner decides a proposal inside the MCP client they already use. The
 * tool returns the card's data; its `_meta.ui.resourceUri` tells a host that renders MCP Apps to show it
 * in the approval card, whose buttons call `react` on the proposal's `#approvals` message through the
 * host — the same decision path as every other surface. A read tool: deciding is `react`'s job.
 */
const AgentCard = z.object({
  name: z.string(),
  model: z.string(),
  tier: z.string(),
  tool_scope: z.array(z.string()),
  skills: z.array(z.string()),
  subagents: z.array(z.string()),
  mcp_servers: z.array(z.object({ name: z.string(), url: z.string(), transport: z.string() })),
  system_prompt: z.string(),
  parent_task_id: z.number().int().nullable(),
});

export const ApprovalCardOutput = z.object({
  proposal_id: z.number().int(),
  kind: z.enum(['tree', 'agent']),
  status: z.enum(['pending', 'approved', 'rejected']),
  goal_id: z.number().int(),
  goal_title: z.string(),
  goal_description: z.string(),
  proposer: z.string(),
  proposer_kind: z.enum(['user', 'agent', 'system']).describe('Who proposed it: a person, an agent, or Colony'),
  reasoning: z.string(),
  message_id: z.number().int().describe('The #approvals message: react approve / reject on it to decide'),
  commands: z.array(z.string()).describe('Every command line approving it lets run on this host, in full'),
  task_count: z.number().int(),
  tree_outline: z.array(z.string()).describe('The task tree, one indented line per task (empty for an agent proposal)'),
  agent: AgentCard.nullable().describe('The agent a spawn proposal would create (null for a task tree)'),
  created_at: z.string(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  reason: z.string().nullable(),
});

const review = defineTool({
  name: 'review_proposal',
  title: 'Review a proposal',
  description: `Owner only. Shows a proposal waiting for your decision — by default the oldest pending one of your team, or proposal_id — with every command line approving it would run on this host (in full, first), the goal, the proposer, its reasoning, and the task tree or the agent it would spawn. Clients that render MCP Apps show it as an approval card (${APPROVAL_CARD_URI}) with Approve and Reject buttons; elsewhere decide with react on message_id (approve, or reject with metadata {"reason": "…"}). A decided proposal shows its status and outcome. Errors: ErrNotFound (no pending proposal), ErrProposalNotFound (no such proposal of yours).`,
  trust: 'read',
  surface: 'owner',
  module: 'mcp',
  input: z.strictObject({
    proposal_id: z.number().int().positive().optional().describe('Default: the oldest pending proposal'),
  }),
  output: ApprovalCardOutput,
  meta: approvalCardToolMeta,
  handler(ctx, a) {
    const db = ctx.app.engine.db;
    const tenant = speaker(ctx.caller).tenant;
    if (a.proposal_id === undefined) {
      const oldest = oldestPendingProposal(db, tenant);
      if (!oldest)
        throw new DomainError(
          'ErrNotFound',
          'no proposal is waiting for your decision; pass proposal_id to see a decided one',
          {},
        );
      return approvalCardOf(db, oldest);
    }
    const p = getProposal(db, a.proposal_id);
    // Another tenant's proposal is "not found", never "forbidden": that would say it exists.
    if (!p || p.ownerId !== tenant)
      throw new DomainError('ErrProposalNotFound', `proposal ${a.proposal_id} not found`, {
        proposal_id: a.proposal_id,
      });
    return approvalCardOf(db, p);
  },
  text: approvalCardText,
});

export const reviewTools: readonly AnyTool[] = [review];
