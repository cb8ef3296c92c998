import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { colony, COLONY_BIN } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony stdio` answers plain tools/call itself once a 2025-11-25 handshake is done
 * (src/mcp/stdio-fast-call.ts), and leaves everything else to the SDK. Raw JSON-RPC lines to a real
 * process, so the wire itself is checked: ids, ordering freedom, refusals, progress.
 */
const scratch = tempDir('colony-stdio-fast-');
let proc: ChildProcess;
const answers = new Map<unknown, (m: Record<string, unknown>) => void>();
const notes: Record<string, unknown>[] = [];
let dir: string;

before(() => {
  dir = join(scratch.dir, 'data');
  const token = JSON.parse(colony(['init', '--data', dir, '--json']).stdout).token as string;
  proc = spawn(process.execPath, [COLONY_BIN, 'stdio', '--data', dir], {
    env: { ...process.env, COLONY_TOKEN: token, COLONY_DATA: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  proc.stderr!.resume();
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    const m = JSON.parse(line) as Record<string, unknown>;
    if ('id' in m && !('method' in m)) answers.get(m.id)?.(m);
    else notes.push(m);
  });
});
after(() => {
  proc.stdin!.end();
  scratch.cleanup();
});

function request(id: unknown, method: string, params: unknown): Promise<Record<string, unknown>> {
  const answered = new Promise<Record<string, unknown>>((resolve) => answers.set(id, resolve));
  proc.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  return answered;
}

describe('colony stdio answers plain tools/call itself after the handshake', () => {
  it('answers calls before and after initialize, with the same results, and leaves progress to the SDK', async () => {
    // Before the handshake the SDK answers (whatever it says), never the fast path with a result.
    const init = await request(0, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '0' },
    });
    assert.equal((init.result as { protocolVersion: string }).protocolVersion, '2025-11-25');
    proc.stdin!.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    // Many calls at once, string and integer ids: each answered once, under its own id.
    const ids = ['a', 1, 'b', 2, 'c'];
    const all = await Promise.all(ids.map((id) => request(id, 'tools/call', { name: 'whoami', arguments: {} })));
    for (const [i, m] of all.entries()) {
      assert.equal(m.id, ids[i]);
      assert.equal(((m.result as Record<string, unknown>).structuredContent as { kind: string }).kind, 'owner');
    }
    // The SDK path (a progress token keeps a call there) answers the same result.
    const viaSdk = await request('p', 'tools/call', { name: 'whoami', arguments: {}, _meta: { progressToken: 7 } });
    assert.deepEqual(viaSdk.result, all[0]!.result);
  });

  it('refuses what the pipeline refuses, as tool errors, and keeps other methods on the SDK', async () => {
    const unknown = await request(10, 'tools/call', { name: 'no_such_tool', arguments: {} });
    assert.equal((unknown.result as { isError: boolean }).isError, true);
    assert.match(JSON.stringify(unknown.result), /ErrToolNotFound/);
    const bad = await request(11, 'tools/call', { name: 'whoami', arguments: { surprise: true } });
    assert.equal((bad.result as { isError: boolean }).isError, true);
    const list = await request(12, 'tools/list', {});
    assert.ok(((list.result as { tools: unknown[] }).tools.length ?? 0) > 10);
    // Not a plain call (arguments an array): the SDK answers it with its own error.
    const odd = await request(13, 'tools/call', { name: 'whoami', arguments: [] });
    assert.ok('error' in odd || (odd.result as { isError?: boolean }).isError === true, JSON.stringify(odd));
  });

  it('refuses the next call once the token is revoked by another process', async () => {
    const me = await request(20, 'tools/call', { name: 'whoami', arguments: {} });
    assert.equal((me.result as { isError?: boolean }).isError, undefined);
    colony(['token', 'rotate', '--data', dir]); // revokes every owner token, this one too
    const next = await request(21, 'tools/call', { name: 'whoami', arguments: {} });
    assert.match(JSON.stringify(next.result), /ErrUnauthorized/);
  });
});
