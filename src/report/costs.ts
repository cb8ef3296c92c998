import type { StoredEvent } from '../engine/event.js';
import type { CostRecorded } from '../events/tasks.js';
import type { TaskRow } from '../projections/task-queries.js';

/** The report's cost tables beside the one by billing code: by who recorded the spend, and by tree level. */
export interface CostRow {
  label: string;
  tokens: number;
  cents: number;
  count: number;
}
/** Spend by who recorded it: report_usage calls and the runs' own usage (a run's cost is a CostRecorded on its task). */
export function costByAgent(events: readonly StoredEvent[]): CostRow[] {
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
export function costByLevel(tasks: readonly TaskRow[]): CostRow[] {
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
