/**
 * A small seeded PRNG (mulberry32) for tests that must be reproducible from a printed seed.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** `n` distinct items, in random order. */
  sample<T>(items: readonly T[], n: number): T[];
}

export function prng(seed: number): Prng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)]!,
    sample(items, n) {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = int(0, i);
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy.slice(0, n);
    },
  };
}

/** A seed from the environment variable `name` when set (to replay a failure), else a fresh one. */
export function seedFrom(name: string): number {
  const fromEnv = process.env[name];
  if (fromEnv !== undefined && fromEnv !== '') return Number(fromEnv) >>> 0;
  return Math.floor(Math.random() * 2 ** 31);
}
