import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { getProposal, type ProposalRow } from './proposal-queries.js';

/**
 * The tenant's pending proposal that has waited longest (review_proposal's default): the owner works
 * the queue from its oldest end, as `#approvals` shows it. Ids are allocated in order, so the smallest
 * id is the oldest. Only the id is read here; the row comes from getProposal, so the column mapping
 * stays in one place.
 */
export function oldestPendingProposal(db: Database, ownerId: number): ProposalRow | null {
  const row = prepared(
    db,
    `SELECT proposal_id AS id FROM proposals WHERE owner_id = ? AND status = 'pending' ORDER BY proposal_id LIMIT 1`,
  ).get(ownerId) as { id: number } | undefined;
  return row ? getProposal(db, row.id) : null;
}
