import { sandboxLabel } from '../events/sandbox.js';
import type { App } from '../app.js';
import { readConsistent } from '../engine/db.js';
import { channelStream } from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import { goalStream } from '../events/goals.js';
import { proposalStream } from '../events/proposals.js';
import { runStream } from '../events/runs.js';
import { taskStream } from '../events/tasks.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { rollupByBillingCode, tasksOfGoal } from '../projections/task-queries.js';
import { proposalsOfGoal } from '../projections/proposal-queries.js';
import { goalView } from '../projections/goal-snapshot.js';
import { getAgent } from '../projections/principal-queries.js';
import { runsOfGoal, type RunRow } from '../projections/run-queries.js';
import { agentsOfGoal, type ReportAgent } from './agents.js';
import { eventsOf, timelineOf, type TimelineEntry } from './timeline.js';
import type { ReportEvidence } from './evidence.js';
import { artifactsOf, type ReportArtifact } from './artifacts.js';
import { costByAgent, costByLevel, type CostRow } from './costs.js';
import { taskForest, type ReportTask } from './task-tree.js';

/**
 * Everything `colony report` shows about one goal, gathered from the projections and the goal's own
 * streams in one read transaction (so every section is of the same moment of the log). Rendering is
 * separate and pure (html.ts).
 */
export interface ReportGoal {
  id: number;
  title: string;
  description: string;
  status: string;
  channel: string;
  owner: string;
  coordinator: string;
  approvalMode: string;
  budgetTokens: number | null;
  budgetCents: number | null;
  spentTokens: number;
  spentCents: number;
  createdAt: string;
  activatedAt: string | null;
  endedAt: string | null;
  completionSummary: string | null;
  pausedReason: string | null;
}
export interface ReportRun {
  id: number;
  agent: string;
  source: string;
  status: string;
  taskId: number | null;
  startedAt: string | null;
  durationMs: number | null;
  tokensIn: number;
  tokensOut: number;
  costCents: number;
  reason: string | null;
  /** How it was confined (one line) and the limit it ran into. */
  sandbox: string | null;
  limitHit: string | null;
}
export interface ReportSummary {
  tasks: number;
  agents: number;
  spawnedAgents: number;
  runs: number;
  events: number;
  artifacts: number;
  tokens: number;
  cents: number;
  outcomes: number;
}
export interface ReportData {
  generatedAt: string;
  goal: ReportGoal;
  tasks: ReportTask[];
  agents: ReportAgent[];
  runs: ReportRun[];
  costs: { byBillingCode: CostRow[]; byAgent: CostRow[]; byLevel: CostRow[] };
  timeline: TimelineEntry[];
  artifacts: ReportArtifact[];
  summary: ReportSummary;
  /** The goal bundle the report was made with (`colony report --bundle`). */
  evidence?: ReportEvidence;
}

/** The report's data for a goal, or null when there is no such goal (callers check its owner). */
export function reportData(app: App, goalId: number): ReportData | null {
  return readConsistent(app.engine.db, () => gather(app, goalId));
}

function gather(app: App, goalId: number): ReportData | null {
  const db = app.engine.db;
  const g = getGoal(db, goalId);
  if (!g) return null;
  const tasks = tasksOfGoal(db, goalId);
  const proposals = proposalsOfGoal(db, goalId);
  const runs = runsOfGoal(db, goalId);
  const events = eventsOf(db, [
    goalStream(goalId),
    ...tasks.map((t) => taskStream(t.taskId)),
    ...proposals.map((p) => proposalStream(p.proposalId)),
    channelStream(g.channelId),
    ...runs.map((r) => runStream(r.runId)),
  ]);
  const names = new Map<number, string>();
  const agentName = (id: number): string => {
    if (!names.has(id)) names.set(id, getAgent(db, id)?.name ?? `agent-${id}`);
    return names.get(id)!;
  };
  const agents = agentsOfGoal(app, g, tasks, proposals, runs);
  const artifacts = artifactsOf(app, g, tasks);
  const goal = goalOf(app, g, events);
  return {
    generatedAt: app.engine.clock().toISOString(),
    goal,
    tasks: taskForest(tasks),
    agents,
    runs: runs.map((r) => runOf(r, agentName)),
    costs: {
      byBillingCode: rollupByBillingCode(db, goalId, null).map((r) => ({
        label: r.billingCode,
        tokens: r.tokens,
        cents: r.cents,
        count: r.taskCount,
      })),
      byAgent: costByAgent(events),
      byLevel: costByLevel(tasks),
    },
    timeline: timelineOf(events, agentName),
    artifacts,
    summary: {
      tasks: tasks.length,
      agents: agents.length,
      spawnedAgents: agents.filter((a) => a.role === 'spawned').length,
      runs: runs.length,
      events: events.length,
      artifacts: artifacts.length,
      tokens: goal.spentTokens,
      cents: goal.spentCents,
      outcomes: tasks.filter((t) => t.status === 'done' || t.status === 'failed').length,
    },
  };
}

function goalOf(app: App, g: GoalRow, events: readonly StoredEvent[]): ReportGoal {
  const v = goalView(app.engine.db, g);
  return {
    id: g.goalId,
    title: g.title,
    description: g.description,
    status: g.status,
    channel: v.channel,
    owner: v.owner,
    coordinator: v.coordinator,
    approvalMode: g.approvalMode,
    budgetTokens: g.budgetTokens,
    budgetCents: g.budgetCents,
    spentTokens: v.spent_tokens,
    spentCents: v.spent_dollars_cents,
    createdAt: g.createdAt,
    activatedAt: events.find((e) => e.type === 'GoalActivated')?.recordedAt ?? null,
    endedAt: g.completedAt,
    completionSummary: g.completionSummary,
    pausedReason: g.pausedReason,
  };
}

const runOf = (r: RunRow, agentName: (id: number) => string): ReportRun => ({
  id: r.runId,
  agent: agentName(r.agentId),
  source: r.source,
  status: r.status,
  taskId: r.taskId,
  startedAt: r.startedAt,
  durationMs: r.durationMs,
  tokensIn: r.tokensIn,
  tokensOut: r.tokensOut,
  costCents: r.costCents,
  reason: r.reason,
  sandbox: r.sandbox ? sandboxLabel(r.sandbox) : null,
  limitHit: r.limitHit,
});
