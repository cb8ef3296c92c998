import type { TaskRow } from '../projections/task-queries.js';

/** The report's task trees: each task with its own spend and its subtree's, and how long it took. */
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
/** The goal's task trees, each node with its own spend and its subtree's. */
export function taskForest(tasks: readonly TaskRow[]): ReportTask[] {
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
