import { readFileSync } from 'node:fs';

/** Prints a .cpuprofile's top self-time functions and files over its last `seconds` (bench/profile-*.ts). */
export function summarizeProfile(path: string, seconds: number) {
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
