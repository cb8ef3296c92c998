/**
 * The external load generator of bench/mcp-ext.ts: autocannon in a process of its own, so neither the
 * servers nor the bench share its event loop. `node --import tsx bench/mcp-ext-load.ts` with an IPC
 * channel; it stays up across runs (its JIT warms once) and answers each Job with a Load, then exits when
 * the parent disconnects. Every response is checked (verifyBody), not only counted: a run that measured
 * errors must not pass for a fast one.
 */
import { createRequire } from 'node:module';

export interface Job {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Replace `[<id>]` in the body with a unique id per request (JSON-RPC ids within one session must differ). */
  idReplacement: boolean;
  connections: number;
  seconds: number;
  /** Every 2xx body must contain each of these, and none of `mustNotContain`. */
  mustContain: string[];
  mustNotContain: string[];
}

export interface Load {
  /** 2xx answers per second over the run (the parent refuses a run with any unchecked or failed answer). */
  callsPerS: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  /** One body that failed the check, if any (for the error message). */
  badBody?: string;
}

// autocannon ships no types; this is the part of its programmatic API used here.
interface AutocannonResult {
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  duration: number;
  latency: { p50: number; p99: number };
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

if (!process.send) throw new Error('bench/mcp-ext-load.ts runs as a forked child (an IPC channel)');

process.on(
  'message',
  (job: Job) =>
    void run(job).then(
      (load) => process.send!(load),
      (e: Error) => process.send!({ error: e.message }),
    ),
);
process.once('disconnect', () => process.exit(0));

async function run(job: Job): Promise<Load> {
  let badBody: string | undefined;
  const verifyBody = (body: string) => {
    const good = job.mustContain.every((s) => body.includes(s)) && !job.mustNotContain.some((s) => body.includes(s));
    if (!good) badBody ??= body.slice(0, 500);
    return good;
  };
  const r = await autocannon({
    url: job.url,
    method: 'POST',
    headers: job.headers,
    body: job.body,
    idReplacement: job.idReplacement,
    connections: job.connections,
    duration: job.seconds,
    verifyBody,
  });
  return {
    callsPerS: r['2xx'] / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    mismatches: r.mismatches,
    badBody,
  };
}
