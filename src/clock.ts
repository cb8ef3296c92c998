/**
 * Time is injected: deciders never read the clock themselves (they are pure), and tests mock this —
 * the only thing tests are allowed to mock.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** A clock that starts at `start` and advances `stepMs` on every reading (0 = frozen). */
export function fixedClock(start: string | Date, stepMs = 0): Clock & { advance(ms: number): void } {
  let t = new Date(start).getTime();
  const clock = (() => {
    const now = new Date(t);
    t += stepMs;
    return now;
  }) as Clock & { advance(ms: number): void };
  clock.advance = (ms: number) => {
    t += ms;
  };
  return clock;
}
