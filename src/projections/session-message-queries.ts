import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { SessionRole } from '../events/runs.js';

/** A run's session transcript as the runs projection keeps it (session_messages): the prompt, the agent's answer, its tool calls. */
export interface SessionMessageRow {
  runId: number;
  seq: number;
  sessionId: string;
  role: SessionRole;
  content: string;
  truncated: boolean;
  bytes: number;
  at: string;
}

const MESSAGE =
  'SELECT run_id AS runId, seq, session_id AS sessionId, role, content, truncated, bytes, at FROM session_messages';
const toMessage = (r: Record<string, unknown>): SessionMessageRow =>
  ({ ...r, truncated: r.truncated === 1 }) as unknown as SessionMessageRow;
export const sessionMessages = (db: Database, runId: number): SessionMessageRow[] =>
  prepared(db, `${MESSAGE} WHERE run_id = ? ORDER BY seq`)
    .all(runId)
    .map((r) => toMessage(r as never));
/** The last `n` messages of a run's session, oldest first. */
export const lastSessionMessages = (
  db: Database,
  runId: number,
  n: number,
): { messages: SessionMessageRow[]; total: number } => {
  const total = (
    prepared(db, 'SELECT count(*) AS n FROM session_messages WHERE run_id = ?').get(runId) as { n: number }
  ).n;
  const rows = prepared(db, `${MESSAGE} WHERE run_id = ? ORDER BY seq DESC LIMIT ?`)
    .all(runId, Math.max(0, n))
    .map((r) => toMessage(r as never));
  return { messages: rows.reverse(), total };
};
