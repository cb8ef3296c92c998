import type { UsageMeter } from './adapters/types.js';
/**
 * A run's own usage report: the last JSON object its process prints on stdout, in the shape Claude Code
 * prints with `claude -p --output-format json`:
 *
 *   {"type":"result","result":"…","total_cost_usd":0.0123,
 *    "usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":800,"output_tokens":350}}
 *
 * Tokens in = input + cache creation + cache read; tokens out = output_tokens; cost is rounded up to whole
 * cents (budgets are in cents; rounding down would let many small runs spend unseen). `result` becomes
 * the session's agent message. Any other output is fine: a run without the object reports no usage of
 * its own (report_usage calls during the run are recorded on the task as they happen).
 */
export interface FinalUsage {
  tokensIn: number;
  tokensOut: number;
  costCents: number;
  result: string | null;
  /** Claude Code's `is_error` and the tools it denied (`permission_denials`): it exits 0 for both. */
  isError: boolean;
  denied: string[];
  /** It said what it cost (`total_cost_usd`); without it the cost is unknown, not zero. */
  costReported: boolean;
}

export function parseFinalUsage(stdout: string): FinalUsage | null {
  const candidates = [
    stdout.trim(),
    ...stdout
      .trim()
      .split('\n')
      .reverse()
      .map((l) => l.trim()),
  ];
  for (const text of candidates) {
    if (!text.startsWith('{') || !text.endsWith('}')) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    const usage = toUsage(value);
    if (usage) return usage;
  }
  return null;
}

/**
 * A command's usage while it runs: each usage object it prints (one JSON object per line, the shape
 * above) is its usage so far — the last one printed counts, as at its end.
 */
export function commandMeter(): UsageMeter {
  let last: FinalUsage | null = null;
  return {
    line(l) {
      last = toUsage(l) ?? last;
    },
    usage: () => ({
      tokensIn: last?.tokensIn ?? 0,
      tokensOut: last?.tokensOut ?? 0,
      cachedIn: 0,
      costUsd: last?.costReported ? last.costCents / 100 : null,
    }),
  };
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);

function toUsage(value: unknown): FinalUsage | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  if (!('usage' in o) && !('total_cost_usd' in o)) return null;
  const u = (typeof o.usage === 'object' && o.usage !== null ? o.usage : {}) as Record<string, unknown>;
  const usd =
    typeof o.total_cost_usd === 'number' && Number.isFinite(o.total_cost_usd) && o.total_cost_usd > 0
      ? o.total_cost_usd
      : 0;
  return {
    tokensIn: count(u.input_tokens) + count(u.cache_creation_input_tokens) + count(u.cache_read_input_tokens),
    tokensOut: count(u.output_tokens),
    costCents: Math.ceil(Math.round(usd * 1e6) / 1e4),
    result: typeof o.result === 'string' ? o.result : null,
    isError: o.is_error === true,
    costReported: typeof o.total_cost_usd === 'number' && Number.isFinite(o.total_cost_usd),
    denied: Array.isArray(o.permission_denials)
      ? o.permission_denials.map((d) => String((d as Record<string, unknown> | null)?.tool_name ?? '?'))
      : [],
  };
}
