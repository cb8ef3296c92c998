import type { goalSnapshot } from '../projections/goal-snapshot.js';

type Snapshot = NonNullable<ReturnType<typeof goalSnapshot>>;
type Node = Snapshot['tasks_tree'][number];

/** How many rows a tree unfolds to by itself; past that the reader unfolds what they want to see. */
export const TREE_ROWS = 200;
/** How much of a handed-in summary each row carries. */
const SUMMARY_CHARS = 280;

export interface Folding {
  /** Unfolded by hand: shown with their children whatever the size. */
  open?: ReadonlySet<number>;
  /** Folded by hand: shown without their children. */
  closed?: ReadonlySet<number>;
}

/**
 * `?view=tree`: what the console's tree shows, and no more. A task's description, acceptance criteria,
 * ancestry (the tree itself holds it), all but the start of its summary, and verifier output stay behind (a 2,400-task goal is
 * ~2 MiB in full). And only the rows on screen: the tree unfolds level by level while a whole level still
 * fits in TREE_ROWS rows (so a small tree comes whole and a big one as deep as it fits, never half a
 * level); a folded task comes with `children: []` and its `child_count`, and the reader unfolds it by
 * hand (`open`), which the next request repeats. Rollups still cover the whole subtree. The same view
 * serves the live tree and every time-travel position, so folding survives a scrub.
 */
export function treeView(s: Snapshot, folding: Folding = {}) {
  const unfolded = unfoldedIds(s.tasks_tree, folding);
  let rows = 0;
  const slim = (n: Node): Record<string, unknown> => {
    rows += 1;
    const v = n.verifier_config as { kind: string; agent_id?: number; recipe?: string } | null;
    return {
      id: n.id,
      parent_task_id: n.parent_task_id,
      title: n.title,
      status: n.status,
      billing_code: n.billing_code,
      assignee: n.assignee,
      lease_expires_at: n.lease_expires_at,
      verifier_config: v && {
        kind: v.kind,
        ...(v.agent_id !== undefined ? { agent_id: v.agent_id } : {}),
        ...(v.recipe !== undefined ? { recipe: v.recipe } : {}),
      },
      budget_tokens: n.budget_tokens,
      budget_dollars_cents: n.budget_dollars_cents,
      spent_tokens: n.spent_tokens,
      spent_dollars_cents: n.spent_dollars_cents,
      rollup: n.rollup,
      failure_reason: n.failure_reason && n.failure_reason.slice(0, 300),
      // The outcome at a glance: the hand-in's first lines and the verdict; the rest is GET /api/tasks/:id.
      summary: n.summary && n.summary.slice(0, SUMMARY_CHARS),
      verdict: n.verdict,
      verified_by: n.verified_by,
      rejections: n.rejections,
      has_verifier_output: n.verifier_output !== null && n.verifier_output !== '',
      artifact_count: n.artifact_message_ids.length,
      blocked_by: n.blocked_by,
      child_count: n.children.length,
      children: unfolded.has(n.id) ? n.children.map(slim) : [],
    };
  };
  const tasks_tree = s.tasks_tree.map(slim);
  return { ...s, tasks_tree, tree_rows: rows };
}

/** Which tasks show their children: whole levels while they fit, then only what the reader unfolded. */
function unfoldedIds(roots: readonly Node[], { open = new Set(), closed = new Set() }: Folding): Set<number> {
  const unfolded = new Set<number>();
  let rows = roots.length;
  let auto = true;
  for (let level = roots.filter((n) => n.children.length > 0); level.length > 0;) {
    const candidates = level.filter((n) => !closed.has(n.id));
    const whole = candidates.reduce((sum, n) => sum + n.children.length, 0);
    auto &&= rows + whole <= TREE_ROWS;
    const opened = auto ? candidates : candidates.filter((n) => open.has(n.id));
    for (const n of opened) unfolded.add(n.id);
    rows += opened.reduce((sum, n) => sum + n.children.length, 0);
    level = opened.flatMap((n) => n.children.filter((c) => c.children.length > 0));
  }
  return unfolded;
}
