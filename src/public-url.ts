/**
 * Where this Colony process can be reached from outside, for URLs it hands out (probe trigger URLs):
 * COLONY_PUBLIC_URL when set (behind a proxy), else the address `colony serve` actually bound (recorded
 * once it listens — `--port 0` included), else the default 127.0.0.1:COLONY_PORT|7070.
 */
let served: string | null = null;

export function setServedUrl(url: string): void {
  served = url.replace(/\/+$/, '');
}

export function publicBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.COLONY_PUBLIC_URL) return env.COLONY_PUBLIC_URL.replace(/\/+$/, '');
  return served ?? `http://127.0.0.1:${env.COLONY_PORT ?? 7070}`;
}

/** The port this process serves HTTP on (the one `colony serve` bound, else COLONY_PORT, else 7070): a web app may not proxy to it. */
export function servedPort(env: NodeJS.ProcessEnv = process.env): number {
  if (served) return Number(new URL(served).port || 80);
  return Number(env.COLONY_PORT ?? 7070);
}
