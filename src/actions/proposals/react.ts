import type { App } from '../../app.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';
import { getProposal, proposalByMessage, type ProposalRow } from '../../projections/proposal-queries.js';
import { toggleReaction } from '../channels.js';
import { decideProposal, type Decided } from './decide.js';

/**
 * Reactions that decide: an approve / reject reaction on a pending proposal's `#approvals` message is
 * that decision, taken in the reaction's own command (decide.ts).
 */
/** The proposal a reaction decides, if it is an approve/reject on a pending proposal message. */
export function proposalDecidedBy(app: App, messageId: number, reaction: string): ProposalRow | null {
  if (reaction !== 'approve' && reaction !== 'reject') return null;
  const p = proposalByMessage(app.engine.db, messageId);
  return p && p.status === 'pending' ? p : null;
}

/**
 * The react tool's command: toggles the reaction and, when it is an approve / reject on a pending
 * proposal, decides the proposal in the same transaction (a decision the reactor may not make is refused whole).
 */
export function reactTo(
  app: App,
  by: Speaker,
  messageId: number,
  reaction: Parameters<typeof toggleReaction>[3],
  metadata: Record<string, unknown> | null,
  actor: CommandOptions,
): { added: boolean; decided: Decided | null } {
  const result = app.engine.transact(actor, () => {
    const proposal = proposalDecidedBy(app, messageId, reaction);
    const { added } = toggleReaction(app, by, messageId, reaction, metadata, actor);
    if (!proposal || !added) return { added, decided: null };
    const reason =
      typeof metadata?.reason === 'string' && metadata.reason.trim() ? metadata.reason.trim() : '(no reason given)';
    const decision = reaction as 'approve' | 'reject';
    return { added, decided: decideProposal(app, by, proposal.proposalId, decision, reason, actor, false, true) };
  });
  return (
    result.value ?? {
      added: result.events.some((e) => e.type === 'ReactionAdded'),
      decided: decidedIn(app, result.events),
    }
  );
}

/** A retried reaction (same idempotency key) answers with the decision its first call made. */
function decidedIn(app: App, events: readonly { type: string; data: unknown }[]): Decided | null {
  const e = events.find((x) => x.type === 'ProposalApproved' || x.type === 'ProposalRejected');
  if (!e) return null;
  const d = e.data as { proposalId: number; taskIds?: number[] };
  return { proposal: getProposal(app.engine.db, d.proposalId)!, taskIds: d.taskIds ?? [] };
}
