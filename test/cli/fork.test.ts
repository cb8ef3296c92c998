import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { openApp } from '../../src/app.js';
import { authenticate } from '../../src/mcp/auth.js';
import { createMcpContext } from '../../src/mcp/context.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';
import { tryLock, type DataLock } from '../../src/cli/data-lock.js';
import { fixedClock } from '../../src/clock.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { colony, oneLine, stdioClient } from '../helpers/cli.js';
import { domainTour } from '../helpers/domain-tour.js';

/**
 * `colony fork` through the real program: a goal with a tree, claims, messages, usage and runs is forked at a
 * position in the middle of its history while the origin is locked as by a running `colony serve`; the fork's
 * log verifies (colony verify), names its origin first, and a real MCP client of `colony stdio` on the fork
 * gets from get_goal exactly what `colony replay` shows of the origin at that position. The origin's files
 * stay byte for byte what they were.
 */
let scratch: ReturnType<typeof tempDir>;
let origin: string;
let lock: DataLock;
let position: number;

const files = () =>
  ['colony.db', 'colony.db-wal']
    .filter((f) => existsSync(join(origin, f)))
    .map(
      (f) =>
        `${f} ${createHash('sha256')
          .update(readFileSync(join(origin, f)))
          .digest('hex')}`,
    );
const row = (dir: string, sql: string, ...args: unknown[]) => {
  const db = new Database(join(dir, 'colony.db'), { readonly: true });
  try {
    return db.prepare(sql).get(...args) as Record<string, any>;
  } finally {
    db.close();
  }
};
/** get_goal through a real MCP Client on the fork's data dir, in this process (no background jobs run). */
async function getGoalOf(dataDir: string, token: string): Promise<unknown> {
  const app = openApp({ dataDir, durability: 'normal' });
  const ctx = createMcpContext(app, buildToolRegistry());
  const server = createMcpServer(ctx, () => authenticate(app, token));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'fork-test', version: '0' });
  try {
    await server.connect(serverSide);
    await client.connect(clientSide);
    await client.listTools();
    const got = (await client.callTool({ name: 'get_goal', arguments: { goal_id: 1 } })) as CallToolResult;
    assert.ok(!got.isError, JSON.stringify(got.content));
    return got.structuredContent;
  } finally {
    await client.close();
    ctx.audit.close();
    app.engine.close();
  }
}
const fork = (args: string[]) => colony(['fork', ...args], { COLONY_DATA: origin });

before(() => {
  scratch = tempDir('colony-fork-cli-');
  origin = join(scratch.dir, 'origin');
  const clock = fixedClock('2026-03-01T09:00:00.000Z', 1000);
  const app = openApp({ dataDir: origin, durability: 'normal', clock });
  domainTour(app, clock);
  app.engine.close();
  // After the tree, the claims, the messages, a cost and a run that timed out; before the budget's pause.
  position = row(origin, "SELECT position FROM es_events WHERE type = 'TaskTimedOut'").position;
  assert.ok(row(origin, "SELECT 1 AS x FROM es_events WHERE stream_id = 'goal-1' AND position > ?", position));
  lock = tryLock(origin, 'serve')!;
  assert.ok(lock, 'the origin is held as a running serve holds it');
});
after(() => {
  lock.release();
  scratch.cleanup();
});

describe('colony fork', () => {
  it('writes a fork that verifies, names its origin and replays to the time-travel snapshot', async () => {
    const before = { files: files(), head: row(origin, 'SELECT max(position) AS p, count(*) AS n FROM es_events') };
    const target = join(scratch.dir, 'what-if');
    const r = fork(['--goal', '1', '--at', String(position), '--data', target, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const cut = row(origin, 'SELECT hash FROM es_events WHERE position = ?', position).hash;
    assert.deepEqual(out.origin.at, { position, hash: cut });
    assert.equal(out.origin.head.position, before.head.p);

    // Checked before `colony replay` below, which opens the origin for writing (and drops an empty WAL on close).
    assert.deepEqual(files(), before.files, "the origin's files are unchanged byte for byte");
    const verified = colony(['verify', '--json', '--data', target]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.deepEqual(JSON.parse(verified.stdout).head, out.head);
    const first = row(target, 'SELECT stream_id, type, data FROM es_events WHERE position = 1');
    assert.equal(first.type, 'LogForked');
    const data = JSON.parse(first.data);
    assert.deepEqual([data.goalId, data.origin.at, data.origin.head], [1, out.origin.at, out.origin.head]);

    const replay = colony(['replay', '--goal', '1', '--position', String(position), '--json', '--data', origin]);
    assert.equal(replay.code, 0, replay.stderr);
    const { position: _p, ...snapshot } = JSON.parse(replay.stdout);
    // The fork as its log has it, before any background job of a running Colony moves it on (a lease that ran
    // out since the origin's time is expired by the sweeper of the first `serve` or `stdio` on it).
    assert.deepEqual(await getGoalOf(target, out.owner_token), snapshot);
    const client = await stdioClient(target, out.owner_token);
    try {
      const got = (await client.callTool({ name: 'get_goal', arguments: { goal_id: 1 } })) as CallToolResult;
      assert.ok(!got.isError, JSON.stringify(got.content));
      assert.equal((got.structuredContent as { goal: { title: string } }).goal.title, snapshot.goal.title);
    } finally {
      await client.close();
    }
    assert.deepEqual(row(origin, 'SELECT max(position) AS p, count(*) AS n FROM es_events'), before.head);
  });

  it('says what it did in text: the origin, the owner token once, the secrets to set again, how to start it', () => {
    const head = row(origin, 'SELECT max(position) AS p FROM es_events').p;
    const target = join(scratch.dir, 'text');
    const r = fork(['--goal', '1', '--at', String(head), '--data', target]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Forked goal 1 at position ${head} of ${origin} into ${target}$`, 'm'));
    assert.match(r.stdout, /^Owner "owner" token for the fork \(shown once, keep it\): colony_\S+$/m);
    assert.match(r.stdout, new RegExp(`^  colony secrets set NPM_TOKEN - --scope user:owner --data ${target}$`, 'm'));
    assert.match(r.stdout, new RegExp(`^Start it: colony serve --data ${target} --port 7071$`, 'm'));
  });

  it('refuses wrong inputs with one line and writes nothing', () => {
    const head = row(origin, 'SELECT max(position) AS p FROM es_events').p;
    const target = join(scratch.dir, 'never');
    const cases: [string[], RegExp][] = [
      [['--goal', '99', '--at', '5', '--data', target], /^colony: ErrGoalNotFound: goal 99 not found$/],
      [['--goal', '1', '--at', '0', '--data', target], /--at must be a positive integer, not "0"/],
      [['--goal', '1', '--at', String(head + 1), '--data', target], /beyond goal 1's history/],
      [['--goal', '2', '--at', '3', '--data', target], /goal 2 did not exist yet at position 3/],
      [['--goal', '1', '--at', '5'], /--data NEW is required/],
      [['--goal', '1', '--at', '5', '--data', origin], /is the origin itself/],
      [['--goal', '1', '--at', '5', '--data', join(scratch.dir, 'text')], /already exists and is not an empty/],
      [['--goal', '1', '--at', '5', '--data', target, '--from', join(scratch.dir, 'nowhere')], /no Colony data in/],
    ];
    for (const [args, pattern] of cases) {
      const r = fork(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
      oneLine(r.stderr);
      assert.match(r.stderr.trim(), pattern);
      assert.ok(!existsSync(target), `${args.join(' ')} wrote nothing`);
    }
    const twice = colony(['--data', origin, 'fork', '--goal', '1', '--at', '5', '--data', target]);
    assert.match(twice.stderr, /give the origin with --from DIR/);
  });
});
