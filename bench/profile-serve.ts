/**
 * Profiles a real `colony serve` under external load (not part of `colony bench`): starts it with
 * --cpu-prof in a child, drives whoami (2025 session, 2026 stateless) or send_message with autocannon for
 * a few seconds, stops it (the profile is written on exit) and prints the top self-time functions and
 * files. `send` is send_message on a 2025-11-25 session, `send2026` the same at 2026-07-28, no session.
 * `node --import tsx bench/profile-serve.ts whoami2025|whoami2026|send|send2026 [seconds] [outdir]`.
 */
import { fork } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startChild } from './child.js';
import { captureModernCall } from './mcp-envelope.js';
import { COLONY_BIN, initColony, legacyTarget, LOAD_CHILD, runLoad } from './mcp-ext.js';
import { FAILED, sendMessageTarget, statelessSendTarget, type Target } from './mcp-ext-write.js';
import { summarizeProfile } from './profile-summary.js';
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
  if (what === 'send2026') {
    const { channelId } = await sendMessageTarget(await legacyTarget(url, auth));
    target = statelessSendTarget(target, channelId);
  }
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
summarizeProfile(join(out, file), Number(secondsArg));
