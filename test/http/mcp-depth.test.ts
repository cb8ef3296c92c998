import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { MAX_MESSAGE_DEPTH } from '../../src/http/mcp-guards.js';
import { MAX_ARGS_DEPTH } from '../../src/mcp/call-checks.js';
import { COLONY_BIN, colony } from '../helpers/cli.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { envelope, MODERN } from '../helpers/tasks-client.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * A JSON-RPC message nested thousands of levels deep, sent to /mcp over a real socket: on the 2026-07-28
 * leg it used to reach the SDK's node adapter, whose JSON.stringify of the parsed body overflowed the stack
 * (HTTP 500, "Internal server error"). Both revisions now refuse it before anything recursive reads it: a
 * 400 JSON-RPC Invalid Request naming the limit, nothing appended, one audit row.
 */
let f: HttpFixture;
before(async () => {
  f = await httpFixture();
});
after(() => f.close());

/** `n` arrays inside each other, as raw JSON text (JSON.stringify of such a value would itself recurse). */
const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const modernHeaders = {
  'mcp-protocol-version': MODERN,
  'mcp-method': 'tools/call',
  'mcp-name': 'whoami',
};
const send = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${f.base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${f.ownerToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
const call = (id: number, params: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"whoami",${params}}}`;
const modernMeta = `"_meta":${JSON.stringify(envelope(false))}`;

type Answer = { error?: { code: number; message: string; data?: unknown }; result?: { isError?: boolean } };

async function refusedAsTooDeep(res: Response, id: number | null): Promise<void> {
  assert.equal(res.status, 400);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as Answer & { id: unknown };
  assert.equal(body.error?.code, -32600);
  assert.equal(body.error?.message, `Invalid Request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels`);
  assert.deepEqual(body.error?.data, { code: 'ErrInvalidInput', max_depth: MAX_MESSAGE_DEPTH });
  assert.equal(body.id, id);
}

describe('/mcp refuses a message nested past the limit on both revisions (never a 500)', () => {
  it('2026-07-28: 5,000 levels in arguments, in params, at the top and as a batch are a 400 naming the limit', async () => {
    const events = f.eventCount();
    const audited = f.ctx.audit.count();
    const deep = nest(5000);
    const bodies: [string, number | null][] = [
      [call(1, `"arguments":{"a":${deep}},${modernMeta}`), 1],
      [call(2, `"x":${deep},${modernMeta}`), 2],
      [`{"jsonrpc":"2.0","id":3,"method":"tools/call","zz":${deep},"params":{"name":"whoami",${modernMeta}}}`, 3],
      [deep, null],
    ];
    for (const [body, id] of bodies) await refusedAsTooDeep(await send(body, modernHeaders), id);
    assert.equal(f.eventCount(), events, 'nothing appended');
    assert.equal(f.ctx.audit.count(), audited + bodies.length, 'one audit row each');
    assert.deepEqual(((r) => [r.principal, r.tool, r.errorCode])(f.ctx.audit.query({ limit: 1 })[0]!), [
      'user:owner',
      '(unreadable request)',
      'ErrInvalidInput',
    ]);
  });

  it('2025-11-25: a deep initialize and a deep call on an open session are refused the same way', async () => {
    const legacy = { 'mcp-protocol-version': '2025-11-25' };
    const deepInit = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"x":${nest(5000)}},"clientInfo":{"name":"raw","version":"0"}}}`;
    await refusedAsTooDeep(await send(deepInit, legacy), 7);
    const client = await f.connect(f.ownerToken);
    const sessionId = (client.transport as { sessionId?: string }).sessionId!;
    const onSession = { ...legacy, 'mcp-session-id': sessionId };
    await refusedAsTooDeep(await send(call(8, `"arguments":{"a":${nest(5000)}}`), onSession), 8);
    // The session is still usable afterwards.
    assert.equal((await client.callTool({ name: 'whoami', arguments: {} })).isError, undefined);
  });

  it('leaves room for honest messages: arguments just past their own limit still get the tool-level error', async () => {
    const ok = await send(call(9, `"arguments":{},"x":${nest(MAX_MESSAGE_DEPTH - 2)},${modernMeta}`), modernHeaders);
    assert.equal(ok.status, 200, 'a message exactly at the limit is served');
    // arguments (depth 3 of the message) holding MAX_ARGS_DEPTH more levels: the tool's own check answers, naming the field.
    const res = await send(call(10, `"arguments":{"a":${nest(MAX_ARGS_DEPTH)}},${modernMeta}`), modernHeaders);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(
      text,
      new RegExp(`ErrInvalidInput: arguments nest deeper than ${MAX_ARGS_DEPTH} levels \\(at a\\[0\\]`),
    );
    await refusedAsTooDeep(await send(call(11, `"x":${nest(MAX_MESSAGE_DEPTH - 1)},${modernMeta}`), modernHeaders), 11);
  });
});

describe('colony stdio (measured: no such hole, the SDK never re-serializes what it read)', () => {
  const scratch = tempDir('colony-stdio-depth-');
  after(() => scratch.cleanup());

  it('answers 5,000-level arguments with ErrInvalidInput and keeps serving', async () => {
    const token = JSON.parse(colony(['init', '--data', scratch.dir, '--json']).stdout).token as string;
    const proc = spawn(process.execPath, [COLONY_BIN, 'stdio', '--data', scratch.dir], {
      env: { ...process.env, COLONY_TOKEN: token, COLONY_DATA: '' },
    });
    const waiters = new Map<number, (line: string) => void>();
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const id = (JSON.parse(line) as { id?: number }).id;
      if (typeof id !== 'number') return;
      waiters.get(id)?.(line);
    });
    const ask = (id: number, line: string) =>
      new Promise<string>((resolve) => {
        waiters.set(id, resolve);
        proc.stdin.write(`${line}\n`);
      });
    try {
      await ask(1, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{${modernMeta}}}`);
      assert.match(
        await ask(2, call(2, `"arguments":{"a":${nest(5000)}},${modernMeta}`)),
        /ErrInvalidInput: arguments nest deeper than 100 levels/,
      );
      assert.match(await ask(3, call(3, modernMeta)), /"kind":"owner"/);
    } finally {
      proc.stdin.end();
      await new Promise((resolve) => proc.once('exit', resolve));
    }
  });
});
