/**
 * Profiles a real `colony serve` under external load (not part of `colony bench`): starts it with
 * --cpu-prof in a child, drives whoami (2025 session, 2026 stateless) or send_message with autocannon for
 * a few seconds, stops it (the profile is written on exit) and prints the top self-time functions and
 * files. `node --import tsx bench/profile-serve.ts whoami2025|whoami2026|send [seconds] [outdir]`.
 */
import { fork } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startChild } from './child.js';
import { captureModernCall } from './mcp-envelope.js';
import { COLONY_BIN, initColony, legacyTarget, LOAD_CHILD, runLoad } from './mcp-ext.js';
import { FAILED, sendMessageTarget, type Target } from './mcp-ext-write.js';
import { scratchDir } from './util.js';

const [what = 'whoami2026', secondsArg = '5', out = '/tmp/prof'] = process.argv.slice(2);
const { dir, cleanup } = scratchDir();
mkdirSync(out, { recursive: true });
const data = join(dir, 'd');
mkdirSync(data);
const token = initColony(data);
const child = await startChild(
  ['--cpu-prof', `--cpu-prof-dir=${out}`, COLONY_BIN, 'serve', '--data', data, '--port', '0'],
  /Colony listening on (http:\/\/\S+)/,
  'stderr',
  { COLONY_DATA: '' },
);
const url = `${child.match[1]!}/mcp`;
const auth = { authorization: `Bearer ${token}` };
let target: Target & { mustContain: string[]; mustNotContain: string[] };
if (what === 'whoami2025')
  target = { ...(await legacyTarget(url, auth)), mustContain: ['"kind":"owner"'], mustNotContain: FAILED };
else if (what === 'send') target = (await sendMessageTarget(await legacyTarget(url, auth))).target;
else {
  const { startChild: sc } = await import('./child.js');
  const v2 = await sc(
    ['--import', 'tsx', new URL('./mcp-baseline-child.ts', import.meta.url).pathname, 'v2'],
    /^listening (\S+)$/,
    'stdout',
  );
  const modern = await captureModernCall(v2.match[1]!);
  await v2.stop();
  target = {
    url,
    headers: { ...modern.headers, ...auth },
    body: modern.body,
    idReplacement: false,
    mustContain: ['"kind":"owner"'],
    mustNotContain: FAILED,
  };
}
const gen = fork(LOAD_CHILD, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
const load = await runLoad(gen, what, { ...target, connections: 10, seconds: Number(secondsArg) });
console.log(`${what}: ${Math.round(load.callsPerS)} calls/s, p99 ${load.p99Ms} ms`);
gen.kill();
await child.stop();
cleanup();
// The main thread's profile (thread 0), only the samples of the load's last `seconds` (start-up left out).
const file = readdirSync(out)
  .filter((f) => /\.0\.\d+\.cpuprofile$/.test(f))
  .sort()
  .pop()!;
summarize(join(out, file), Number(secondsArg));

function summarize(path: string, seconds: number) {
  const p = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number }[];
    samples: number[];
    timeDeltas: number[];
    endTime: number;
  };
  // Sample times, then hit counts of the window [end - seconds - 0.3 s, end - 0.3 s] (the stop is left out).
  let t = (p as unknown as { startTime: number }).startTime;
  const hits = new Map<number, number>();
  const from = p.endTime - (seconds + 0.3) * 1e6;
  const to = p.endTime - 0.3e6;
  p.samples.forEach((id, i) => {
    t += p.timeDeltas[i]!;
    if (t >= from && t <= to) hits.set(id, (hits.get(id) ?? 0) + 1);
  });
  for (const n of p.nodes) n.hitCount = hits.get(n.id) ?? 0;
  const total = p.nodes.reduce((s, n) => s + n.hitCount, 0);
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const n of p.nodes) {
    const f = n.callFrame.url.replace(/^.*node_modules\//, 'nm:').replace(/^file:\/\/\/work\/main\//, '');
    const k = `${n.callFrame.functionName || '(anon)'} ${f}:${n.callFrame.lineNumber}`;
    byFn.set(k, (byFn.get(k) ?? 0) + n.hitCount);
    const pkg = f.startsWith('nm:')
      ? f
          .split('/')
          .slice(0, f.includes('@') ? 2 : 1)
          .join('/')
      : f || n.callFrame.functionName;
    byFile.set(pkg, (byFile.get(pkg) ?? 0) + n.hitCount);
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, h]) => `${((100 * h) / total).toFixed(1).padStart(5)}%  ${name}`)
      .join('\n');
  console.log(`--- by file/package (self) ---\n${top(byFile, 30)}\n--- by function (self) ---\n${top(byFn, 40)}`);
  console.log(`profile: ${path}`);
}
