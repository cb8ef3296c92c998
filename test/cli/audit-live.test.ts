import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { colony, COLONY_BIN } from '../helpers/cli.js';

/**
 * The audit trail through the real CLI while the server that writes it runs, and after it was killed:
 * `colony audit tail` (another process) shows every answered call at once, and a `colony stdio` killed
 * with -9 loses none of the calls it answered (its journal is moved by the next process to open the trail).
 */
async function stdio(dir: string, token: string): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [COLONY_BIN, 'stdio', '--data', dir],
    env: { ...process.env, COLONY_TOKEN: token, COLONY_DATA: '' } as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'colony-audit-live-test', version: '0' });
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

const tail = (dir: string): { tool: string; outcome: string }[] =>
  colony(['audit', 'tail', '--data', dir, '-n', '100', '--json'])
    .stdout.trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('colony audit while the server runs, and after it was killed', () => {
  it('tails a live server at once and keeps every call a killed one answered', async (t) => {
    const scratch = tempDir('colony-audit-live-');
    t.after(scratch.cleanup);
    const dir = join(scratch.dir, 'data');
    const token = JSON.parse(colony(['init', '--data', dir, '--json']).stdout).token as string;

    const live = await stdio(dir, token);
    for (let i = 0; i < 5; i++) await live.client.callTool({ name: 'whoami', arguments: {} });
    assert.equal(tail(dir).length, 5, 'another process sees the live server rows at once');

    for (let i = 0; i < 20; i++) await live.client.callTool({ name: 'my_status', arguments: {} });
    process.kill(live.pid, 'SIGKILL'); // at once: the last rows are still in its journal
    await live.client.close().catch(() => undefined);
    const rows = tail(dir);
    assert.deepEqual(
      rows.map((r) => r.tool),
      [...Array(5).fill('whoami'), ...Array(20).fill('my_status')],
    );
    assert.deepEqual(readdirSync(join(dir, 'audit-journal')), [], 'the dead server journal was moved and removed');
  });
});
