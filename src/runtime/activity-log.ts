import type { App } from '../app.js';
import { prepared, type Database } from '../engine/db.js';
import { STORED_EVENT_COLUMNS, type StoredEvent, type StoredEventRow } from '../engine/event.js';
import { toStoredEvent } from '../engine/store.js';
import { log as defaultLog } from '../log.js';
import { getAgent } from '../projections/principal-queries.js';
import { getProposal } from '../projections/proposal-queries.js';
import { getRun } from '../projections/run-queries.js';
import { LogTick } from './log-tick.js';

/**
 * What `colony serve` tells its operator, one info line each: runs started and finished, proposals
 * decided, budget alerts and budget pauses. It tails the log like the reactor — this process's commits
 * at once through the bus, other processes' (`colony approve` from a shell) on the next poll — so a
 * decision made anywhere shows up here. Only names, ids, statuses and numbers are logged: never a
 * message, a reason, a prompt, an argument or anything a secret could hide in.
 */
const TYPES = [
  'RunStarted',
  'RunFinished',
  'RunFailed',
  'ProposalApproved',
  'ProposalRejected',
  'BudgetAlertRaised',
  'GoalPaused',
] as const;
const SELECT = `SELECT ${STORED_EVENT_COLUMNS} FROM es_events WHERE position > ? AND position <= ? AND type IN (${TYPES.map((t) => `'${t}'`).join(', ')}) ORDER BY position`;
type Logger = Pick<typeof defaultLog, 'info' | 'warn'>;

export class ActivityLog {
  private cursor = 0;
  private readonly ticks: LogTick;

  constructor(
    private readonly app: App,
    private readonly log: Logger = defaultLog,
    pollMs = 1_000,
  ) {
    this.ticks = new LogTick(app, () => this.drain(), pollMs);
  }

  start(): this {
    // From now on: what happened before this start is history, not news.
    this.cursor = this.app.engine.durableHead();
    this.ticks.start();
    return this;
  }

  stop(): void {
    this.ticks.stop();
  }

  private drain(): void {
    if (!this.ticks.running) return;
    const db = this.app.engine.db;
    try {
      const head = this.app.engine.durableHead(); // committed and on disk: a batch may be open
      const rows = prepared(db, SELECT).all(this.cursor, head) as StoredEventRow[];
      this.cursor = head;
      for (const row of rows) this.line(toStoredEvent(row));
    } catch (err) {
      this.log.warn({ err }, 'activity log: could not read the log');
    }
  }

  private line(e: StoredEvent): void {
    const db = this.app.engine.db;
    const entry = runEntry(db, e) ?? decisionEntry(db, e);
    if (entry) this.log.info(entry.fields, entry.message);
  }
}

interface Entry {
  fields: Record<string, unknown>;
  message: string;
}

const agentName = (db: Database, id: unknown) => (typeof id === 'number' ? (getAgent(db, id)?.name ?? null) : null);

/** A run started, finished or failed. */
function runEntry(db: Database, e: StoredEvent): Entry | null {
  const d = e.data as Record<string, unknown>;
  const who = { runId: d.runId, agentId: d.agentId, agent: agentName(db, d.agentId) };
  switch (e.type) {
    case 'RunStarted': {
      const run = getRun(db, d.runId as number);
      const fields = { ...who, taskId: run?.taskId ?? null, goalId: run?.goalId ?? null, source: run?.source ?? null };
      return { fields, message: 'run started' };
    }
    case 'RunFinished':
      return {
        fields: {
          ...who,
          status: d.status,
          exitCode: d.exitCode,
          signal: d.signal,
          limit: d.limit ?? null,
          durationMs: d.durationMs,
          tokens: (d.tokensIn as number) + (d.tokensOut as number),
          costCents: d.costCents,
        },
        message: 'run finished',
      };
    case 'RunFailed':
      // The reason is prose that may quote a process's output: the run's record has it (`colony runs show`).
      return { fields: { ...who, status: 'failed' }, message: 'run finished' };
    default:
      return null;
  }
}

/** A proposal decided, a budget alert, a goal paused by its budget. */
function decisionEntry(db: Database, e: StoredEvent): Entry | null {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'ProposalApproved':
    case 'ProposalRejected': {
      const p = getProposal(db, d.proposalId as number);
      const by = (d.by as { name?: string } | undefined)?.name ?? null;
      const approved = e.type === 'ProposalApproved';
      return {
        fields: {
          proposalId: d.proposalId,
          goalId: p?.goalId ?? null,
          kind: p?.kind ?? null,
          by,
          decision: approved ? 'approved' : 'rejected',
          ...(approved ? { auto: d.auto, tasks: (d.taskIds as number[]).length, agentId: d.agentId ?? null } : {}),
        },
        message: approved ? 'proposal approved' : 'proposal rejected',
      };
    }
    case 'BudgetAlertRaised':
      return {
        fields: { goalId: d.goalId, dimension: d.dimension, spent: d.spent, budget: d.budget, percent: d.percent },
        message: 'budget alert',
      };
    case 'GoalPaused':
      return {
        fields: { goalId: d.goalId, dimension: d.dimension, spent: d.spent, requested: d.requested, budget: d.budget },
        message: 'goal paused: budget reached',
      };
    default:
      return null;
  }
}
