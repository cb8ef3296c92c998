import type { Database } from 'better-sqlite3';
import { streamKind, type StoredEvent } from '../../engine/event.js';
import { getGoal } from '../../projections/goal-queries.js';
import { getAgent } from '../../projections/principal-queries.js';
import { getProposal } from '../../projections/proposal-queries.js';
import { getRun } from '../../projections/run-queries.js';
import { getTask, ownerOfTask } from '../../projections/task-queries.js';
import { agentUri, goalTreeUri, goalUri, runTranscriptUri, runUri } from './uris.js';

/**
 * Which resources an appended event changes, for resources/subscribe (notifications/resources/updated),
 * read from the projections after commit (the bus runs after the transaction, so they hold the event).
 * Only URIs of `tenant`: agent names repeat across tenants, so colony://agents/worker of one team must
 * never notify a subscriber of another. The server still sends a URI only to sessions subscribed to it,
 * and should accept a subscription only for a URI the caller can read (readResource succeeds), so a
 * notification never tells anyone more than a read would.
 *
 * It may over-notify (a RunWakeMerged touches the agent although its page barely changes) but covers
 * every event that changes what a read returns, except time itself: reputation decays with age and no
 * event marks that, and a goal's spawned_agents show a quarantine that only the agent's URI announces.
 */
type Touched = { tenant: number | null; uris: string[] };

export function resourceUrisTouchedBy(event: StoredEvent, db: Database, tenant: number): string[] {
  const touched = touchedBy(event, db);
  return touched.tenant === tenant ? touched.uris : [];
}

/** Whether resources/list changes (notifications/resources/list_changed): a goal or an agent appeared. */
export const resourceListChangedBy = (event: StoredEvent): boolean =>
  event.type === 'GoalCreated' || event.type === 'AgentRegistered';

const NONE: Touched = { tenant: null, uris: [] };
const goalUris = (goalId: number): string[] => [goalUri(goalId), goalTreeUri(goalId)];

function touchedBy(event: StoredEvent, db: Database): Touched {
  const kind = streamKind(event.streamId);
  const id = Number(event.streamId.slice(kind.length + 1));
  if (!Number.isSafeInteger(id)) return NONE;
  switch (kind) {
    case 'goal': {
      const goal = getGoal(db, id);
      return goal ? { tenant: goal.ownerId, uris: goalUris(id) } : NONE;
    }
    case 'task': {
      // A project task (no goal) belongs to no resource yet.
      const task = getTask(db, id);
      return task && task.goalId !== null ? { tenant: ownerOfTask(db, task), uris: goalUris(task.goalId) } : NONE;
    }
    case 'proposal': {
      const p = getProposal(db, id);
      return p ? { tenant: p.ownerId, uris: [goalUri(p.goalId)] } : NONE;
    }
    case 'run':
      return runTouched(event, db, id);
    case 'agent':
    case 'runtime': {
      const agent = getAgent(db, id);
      return agent ? { tenant: agent.ownerId, uris: [agentUri(agent.name)] } : NONE;
    }
    default:
      return NONE;
  }
}

/** A transcript changes with its messages; the run with every other event, and so does its agent's status and latest runs. */
function runTouched(event: StoredEvent, db: Database, runId: number): Touched {
  const run = getRun(db, runId);
  if (!run) return NONE;
  if (event.type === 'SessionMessageRecorded') return { tenant: run.ownerId, uris: [runTranscriptUri(runId)] };
  const agent = getAgent(db, run.agentId);
  return { tenant: run.ownerId, uris: [runUri(runId), ...(agent ? [agentUri(agent.name)] : [])] };
}
