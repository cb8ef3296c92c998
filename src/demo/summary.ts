import type { App } from '../app.js';
import { channelMessages } from '../projections/channel-queries.js';
import { getGoal } from '../projections/goal-queries.js';
import { getAgent } from '../projections/principal-queries.js';
import { listRuns } from '../projections/run-queries.js';
import type { ReportData } from '../report/data.js';
import type { ReportTask } from '../report/task-tree.js';
import { ARTIFACT } from '../../examples/doc-gardener/shared.js';

/**
 * What `colony demo` prints at the end, and its own check of SC-003 on the report's data: ≥ 1 goal,
 * a tree of ≥ 3 nodes, ≥ 1 spawned specialist, ≥ 1 verified-or-failed task, non-zero cost by billing
 * code, ≥ 10 timeline events, and ≥ 1 run per specialist with non-zero duration and tokens out.
 */
export interface DemoSummary {
  goal: { id: number; title: string; status: string; summary: string | null };
  tasks: { total: number; by_status: Record<string, number> };
  agents: { coordinator: string; spawned: string[] };
  runs: { total: number; by_agent: Record<string, number>; by_status: Record<string, number> };
  cost: { tokens: number; cents: number; by_billing_code: { billing_code: string; tokens: number; cents: number }[] };
  findings: number | null;
  events: number;
  artifacts: number;
  sc003: { ok: boolean; failed: string[] };
}

const tally = (keys: readonly string[]): Record<string, number> =>
  keys.reduce<Record<string, number>>((t, k) => ({ ...t, [k]: (t[k] ?? 0) + 1 }), {});

function flatten(tasks: readonly ReportTask[]): ReportTask[] {
  return tasks.flatMap((t) => [t, ...flatten(t.children)]);
}

export function summarize(app: App, data: ReportData): DemoSummary {
  const tasks = flatten(data.tasks);
  const spawned = data.agents.filter((a) => a.role === 'spawned').map((a) => a.name);
  // Every run of the demo's agents: runs woken by a DM belong to no goal, so the report's list is not all of them.
  const runs = listRuns(app.engine.db, { ownerId: getGoal(app.engine.db, data.goal.id)!.ownerId, limit: 10_000 });
  const name = (id: number) => getAgent(app.engine.db, id)?.name ?? `agent-${id}`;
  return {
    goal: { id: data.goal.id, title: data.goal.title, status: data.goal.status, summary: data.goal.completionSummary },
    tasks: { total: tasks.length, by_status: tally(tasks.map((t) => t.status)) },
    agents: { coordinator: data.goal.coordinator, spawned },
    runs: {
      total: runs.length,
      by_agent: tally(runs.map((r) => name(r.agentId))),
      by_status: tally(runs.map((r) => r.status)),
    },
    cost: {
      tokens: data.goal.spentTokens,
      cents: data.goal.spentCents,
      by_billing_code: data.costs.byBillingCode.map((c) => ({
        billing_code: c.label,
        tokens: c.tokens,
        cents: c.cents,
      })),
    },
    findings: findingsOf(app, data),
    events: data.timeline.length,
    artifacts: data.artifacts.length,
    sc003: sc003(data, tasks, spawned),
  };
}

/** The count the cli-verifier put on its diff artifact (null when it never posted one). */
function findingsOf(app: App, data: ReportData): number | null {
  const goal = getGoal(app.engine.db, data.goal.id)!;
  const diff = channelMessages(app.engine.db, goal.channelId, 1_000_000, null)
    .filter((m) => m.metadata?.artifact === ARTIFACT.diff)
    .at(-1);
  return typeof diff?.metadata?.findings === 'number' ? diff.metadata.findings : null;
}

function sc003(data: ReportData, tasks: readonly ReportTask[], spawned: readonly string[]): DemoSummary['sc003'] {
  const ranWell = (agent: string) =>
    data.runs.some((r) => r.agent === agent && (r.durationMs ?? 0) > 0 && r.tokensOut > 0);
  const checks: [boolean, string][] = [
    [tasks.length >= 3, `a tree of ≥ 3 nodes (${tasks.length})`],
    [spawned.length >= 1, '≥ 1 spawned specialist'],
    [tasks.some((t) => t.status === 'done' || t.status === 'failed'), '≥ 1 verified or failed task'],
    [data.costs.byBillingCode.some((c) => c.cents > 0 && c.tokens > 0), 'non-zero cost by billing code'],
    [data.timeline.length >= 10, `≥ 10 timeline events (${data.timeline.length})`],
    ...spawned.map((a): [boolean, string] => [ranWell(a), `a run of ${a} with non-zero duration and tokens`]),
  ];
  const failed = checks.filter(([ok]) => !ok).map(([, what]) => what);
  return { ok: failed.length === 0, failed };
}
