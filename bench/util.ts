import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A benchmark figure, always with the baseline measured in the same run. */
export interface Figure {
  value: number;
  unit: string;
  baseline: number;
  ratio: number;
  /** The data set, where the figure depends on its size (e.g. a smaller one in --quick). */
  data?: string;
}

export const figure = (value: number, unit: string, baseline: number, ratio = value / baseline): Figure => ({
  value: round(value),
  unit,
  baseline: round(baseline),
  ratio: Math.round(ratio * 1000) / 1000,
});

const round = (n: number): number =>
  n >= 100 ? Math.round(n) : n >= 1 ? Math.round(n * 100) / 100 : Math.round(n * 1000) / 1000;

/** Seeded PRNG (mulberry32): the same workload on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seconds(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

export function scratchDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** ~250 bytes of comment text: the size of a typical small event payload. */
export const PAYLOAD_TEXT =
  'The agent finished the review of the pull request and left three comments about naming, one about error handling and a question about the retry policy of the webhook client; it asks the owner whether to split the change.';

/** The nearest-rank percentile (p in 0..1). */
export const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
};

/**
 * Latencies in ms of `subject` and `baseline`, run alternately `runs` times after `warmup` runs of each,
 * so drift hits both alike.
 */
export async function alternateMs(
  runs: number,
  warmup: number,
  baseline: () => unknown,
  subject: () => unknown,
): Promise<{ subject: number[]; baseline: number[] }> {
  const out = { subject: [] as number[], baseline: [] as number[] };
  const time = async (fn: () => unknown) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  for (let i = 0; i < warmup + runs; i++) {
    const b = await time(baseline);
    const s = await time(subject);
    if (i >= warmup) {
      out.baseline.push(b);
      out.subject.push(s);
    }
  }
  return out;
}

/** Median and p95 figures (`name` and `name` with `_p95`) from alternated latencies. */
export function latencyFigures(
  name: string,
  ms: { subject: number[]; baseline: number[] },
  data?: string,
): Record<string, Figure> {
  const withData = (f: Figure): Figure => (data ? { ...f, data } : f);
  return {
    [`${name}_ms`]: withData(figure(median(ms.subject), 'ms', median(ms.baseline))),
    [`${name}_p95_ms`]: withData(figure(percentile(ms.subject, 0.95), 'ms', percentile(ms.baseline, 0.95))),
  };
}
