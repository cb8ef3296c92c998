import { sandboxLabel } from '../events/sandbox.js';
import type { App } from '../app.js';
import { readConsistent } from '../engine/db.js';
import { channelStream } from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import { goalStream } from '../events/goals.js';
import { proposalStream } from '../events/proposals.js';
import { runStream } from '../events/runs.js';
import { taskStream, type CostRecorded } from '../events/tasks.js';
import { channelMessages, getMessage, type MessageRow } from '../projections/channel-queries.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { rollupByBillingCode, tasksOfGoal, type TaskRow } from '../projections/task-queries.js';
import { proposalsOfGoal } from '../projections/proposal-queries.js';
import { goalView } from '../projections/goal-snapshot.js';
import { getAgent } from '../projections/principals.js';
import { runsOfGoal, type RunRow } from '../projections/run-queries.js';
import { agentsOfGoal, type ReportAgent } from './agents.js';
import { eventsOf, timelineOf, type TimelineEntry } from './timeline.js';
import type { ReportEvidence } from './evidence.js';

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
export interface ReportTask {
  id: number;
  title: string;
  depth: number;
  status: string;
  billingCode: string;
  assignee: string | null;
  verifierKind: string;
  spentTokens: number;
  spentCents: number;
  subtreeTokens: number;
  subtreeCents: number;
  claimedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  verdict: string | null;
  failureReason: string | null;
  summary: string | null;
  children: ReportTask[];
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
export interface CostRow {
  label: string;
  tokens: number;
  cents: number;
  count: number;
}
export interface ReportArtifact {
  messageId: number;
  channel: string;
  from: string;
  at: string;
  subject: string | null;
  body: string;
  taskIds: number[];
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
    tasks: forest(tasks),
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

/** The goal's task trees, each node with its own spend and its subtree's. */
function forest(tasks: readonly TaskRow[]): ReportTask[] {
  const nodes = new Map<number, ReportTask>(tasks.map((t) => [t.taskId, taskOf(t)]));
  const roots: ReportTask[] = [];
  for (const t of tasks) {
    const parent = t.parentId === null ? undefined : nodes.get(t.parentId);
    (parent ? parent.children : roots).push(nodes.get(t.taskId)!);
  }
  const sum = (n: ReportTask): void => {
    for (const c of n.children) {
      sum(c);
      n.subtreeTokens += c.subtreeTokens;
      n.subtreeCents += c.subtreeCents;
    }
  };
  roots.forEach(sum);
  return roots;
}

function taskOf(t: TaskRow): ReportTask {
  const duration = t.claimedAt && t.completedAt ? Date.parse(t.completedAt) - Date.parse(t.claimedAt) : null;
  return {
    id: t.taskId,
    title: t.title,
    depth: t.depth,
    status: t.status,
    billingCode: t.billingCode,
    assignee: t.assigneeName,
    verifierKind: t.verifier.kind,
    spentTokens: t.spentTokens,
    spentCents: t.spentCents,
    subtreeTokens: t.spentTokens,
    subtreeCents: t.spentCents,
    claimedAt: t.claimedAt,
    completedAt: t.completedAt,
    durationMs: duration,
    verdict: t.verdict,
    failureReason: t.failureReason,
    summary: t.summary,
    children: [],
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

/** Spend by who recorded it: report_usage calls and the runs' own usage (a run's cost is a CostRecorded on its task). */
function costByAgent(events: readonly StoredEvent[]): CostRow[] {
  const rows = new Map<string, CostRow>();
  for (const e of events) {
    if (e.type !== 'CostRecorded') continue;
    const d = (e as unknown as CostRecorded).data;
    const row = rows.get(d.by.key) ?? { label: d.by.name, tokens: 0, cents: 0, count: 0 };
    rows.set(d.by.key, { ...row, tokens: row.tokens + d.tokens, cents: row.cents + d.cents, count: row.count + 1 });
  }
  return [...rows.values()].sort((a, b) => b.cents - a.cents || b.tokens - a.tokens || a.label.localeCompare(b.label));
}

/** Each task's own spend summed per tree level (depth 0 = the roots). */
function costByLevel(tasks: readonly TaskRow[]): CostRow[] {
  const rows = new Map<number, CostRow>();
  for (const t of tasks) {
    const row = rows.get(t.depth) ?? { label: `level ${t.depth}`, tokens: 0, cents: 0, count: 0 };
    rows.set(t.depth, {
      ...row,
      tokens: row.tokens + t.spentTokens,
      cents: row.cents + t.spentCents,
      count: row.count + 1,
    });
  }
  return [...rows.entries()].sort(([a], [b]) => a - b).map(([, r]) => r);
}

const ALL_MESSAGES = 1_000_000;
/** Messages of the goal channel marked `metadata.kind = artifact`, and every message a task named as its artifact. */
function artifactsOf(app: App, g: GoalRow, tasks: readonly TaskRow[]): ReportArtifact[] {
  const found = new Map<number, MessageRow>();
  for (const m of channelMessages(app.engine.db, g.channelId, ALL_MESSAGES, null))
    if (m.metadata?.kind === 'artifact') found.set(m.messageId, m);
  for (const id of tasks.flatMap((t) => t.artifactMessageIds)) {
    const m = found.has(id) ? null : getMessage(app.engine.db, id);
    if (m) found.set(id, m);
  }
  return [...found.values()]
    .sort((a, b) => a.messageId - b.messageId)
    .map((m) => ({
      messageId: m.messageId,
      channel: m.channelName,
      from: m.fromName,
      at: m.createdAt,
      subject: m.subject,
      body: m.body,
      taskIds: tasks.filter((t) => t.artifactMessageIds.includes(m.messageId)).map((t) => t.taskId),
    }));
}
