/**
 * Profiles a real `colony stdio` under the sequential load of `mcp_stdio_calls_per_s` (not part of
 * `colony bench`): spawns it with --cpu-prof behind an SDK client, makes `calls` whoami calls after a
 * warm-up, closes it (the profile is written on exit) and prints the top self-time functions and files.
 * `node --import tsx bench/profile-stdio.ts [calls] [outdir]`.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createOwner } from '../src/actions/principals.js';
import { openApp } from '../src/app.js';
import { COLONY_BIN } from './mcp-ext.js';
import { summarizeProfile } from './profile-summary.js';
import { scratchDir } from './util.js';

const [callsArg = '20000', out = '/tmp/prof-stdio'] = process.argv.slice(2);
const { dir, cleanup } = scratchDir();
mkdirSync(out, { recursive: true });
const data = join(dir, 'd');
mkdirSync(data);
const app = openApp({ dataDir: data });
const token = createOwner(app, 'owner', { actor: 'system' }).token;
app.engine.close();
const transport = new StdioClientTransport({
  command: process.execPath,
  args: ['--cpu-prof', `--cpu-prof-dir=${out}`, COLONY_BIN, 'stdio', '--data', data],
  env: { ...(process.env as Record<string, string>), COLONY_TOKEN: token, COLONY_DATA: '' },
  stderr: 'ignore',
});
const client = new Client({ name: 'colony-profile', version: '0' });
await client.connect(transport);
const whoami = () => client.callTool({ name: 'whoami', arguments: {} });
for (let i = 0; i < 3000; i++) await whoami();
const calls = Number(callsArg);
const started = performance.now();
for (let i = 0; i < calls; i++) await whoami();
const seconds = (performance.now() - started) / 1000;
console.log(`stdio whoami: ${Math.round(calls / seconds)} calls/s`);
await client.close();
await new Promise((r) => setTimeout(r, 1000)); // the child writes its profile as it exits
cleanup();
const file = readdirSync(out)
  .filter((f) => /\.0\.\d+\.cpuprofile$/.test(f))
  .sort()
  .pop()!;
summarizeProfile(join(out, file), seconds - 0.5);
