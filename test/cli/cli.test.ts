import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isAbsolute, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, statSync } from 'node:fs';
import { Engine } from '../../src/engine/engine.js';
import { productProjections } from '../../src/app.js';
import { openDatabase } from '../../src/engine/db.js';
import { spawn } from 'node:child_process';
import { COLONY_BIN, colony, colonyLive, oneLine } from '../helpers/cli.js';
import { pgScratch, pgSkip } from '../helpers/pg.js';
import { openCard, runCard } from '../helpers/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';

// Every product projection, in registration order (each domain adds its own).
const PRODUCT_NAMES = productProjections.map((p) => p.name).join(', ');

/** The real CLI, as separate processes, on real data dirs. */
const scratch = tempDir('colony-cli-');
after(() => scratch.cleanup());

/** A data dir initialized (2 events: the owner and its token) plus `cards` cards of 2 events each (open + comment). */
function seeded(name: string, cards: number): string {
  const dir = join(scratch.dir, name);
  assert.equal(colony(['init', '--data', dir]).code, 0);
  const engine = Engine.open({ file: join(dir, 'colony.db'), projections: productProjections });
  for (let i = 0; i < cards; i++)
    runCard(engine, openCard(engine, `CLI card ${i}`), { type: 'CommentCard', text: `note ${i}` });
  engine.close();
  return dir;
}

describe('colony --help and bad invocations', () => {
  it('lists every command', () => {
    const r = colony(['--help']);
    assert.equal(r.code, 0);
    for (const cmd of ['init', 'serve', 'stdio', 'token', 'agents', 'audit', 'verify', 'rebuild', 'events', 'bench'])
      assert.match(r.stdout, new RegExp(`\\b${cmd}\\b`));
  });

  it('gives each command its own --help', () => {
    for (const cmd of [
      ['init'],
      ['serve'],
      ['stdio'],
      ['token', 'create'],
      ['token', 'rotate'],
      ['agents', 'create'],
      ['agents', 'list'],
      ['audit', 'tail'],
      ['audit', 'export'],
      ['verify'],
      ['rebuild'],
      ['events', 'tail'],
      ['bench'],
    ]) {
      const r = colony([...cmd, '--help']);
      assert.equal(r.code, 0, cmd.join(' '));
      assert.match(r.stdout, /Usage: colony/);
    }
  });

  it('refuses an unknown command with one line on stderr and a non-zero exit', () => {
    const r = colony(['frobnicate']);
    assert.notEqual(r.code, 0);
    oneLine(r.stderr);
    assert.match(r.stderr, /unknown command 'frobnicate'/);
  });

  it('reads of an uninitialized data dir answer with one line, not a stack trace (audit tail, verify, events tail)', () => {
    for (const cmd of [['audit', 'tail'], ['verify'], ['events', 'tail']]) {
      const r = colony([...cmd, '--data', join(scratch.dir, 'never-made')]);
      assert.equal(r.code, 1, cmd.join(' '));
      oneLine(r.stderr);
      assert.match(r.stderr, /^colony: no Colony data in /, cmd.join(' '));
    }
  });

  it('refuses a bad --durability with one clear line', () => {
    const r = colony(['init', '--data', join(scratch.dir, 'bad'), '--durability', 'fast']);
    assert.equal(r.code, 1);
    oneLine(r.stderr);
    assert.match(r.stderr, /--durability must be "full" or "normal"/);
    assert.equal(existsSync(join(scratch.dir, 'bad')), false, 'nothing is created');
  });

  it('refuses to read a data dir that was never initialized', () => {
    for (const cmd of [['verify'], ['rebuild'], ['events', 'tail']]) {
      const r = colony([...cmd, '--data', join(scratch.dir, 'missing')]);
      assert.equal(r.code, 1, cmd.join(' '));
      oneLine(r.stderr);
      assert.match(r.stderr, /no Colony data in .*missing \(run "colony init" first/);
    }
  });
});

describe('colony init', () => {
  it('creates the data dir and the store, then says it is already initialized', () => {
    const dir = join(scratch.dir, 'init');
    const first = colony(['init', '--data', dir, '--json', '--owner', 'alice']);
    assert.equal(first.code, 0, first.stderr);
    const created = JSON.parse(first.stdout);
    assert.deepEqual(
      { ...created, token: typeof created.token, signing_key: typeof created.signing_key },
      { owner: 'alice', token: 'string', data: dir, created: true, agent_command: null, signing_key: 'string' },
    );
    assert.match(created.signing_key, /^SHA256:[A-Za-z0-9+/]{43}$/);
    assert.equal(statSync(join(dir, 'signing.key')).mode & 0o777, 0o600, 'the signing key is private');
    assert.match(created.token, /^colony_[A-Za-z0-9_-]{43}$/);
    assert.equal(statSync(dir).mode & 0o777, 0o700, 'the data dir is private');
    assert.equal(statSync(join(dir, 'secrets.key')).mode & 0o777, 0o600, 'the master key is private');
    assert.equal(statSync(join(dir, 'secrets.key')).size, 32);
    const again = colony(['init', '--data', dir]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /already initialized .*no new token/);
    assert.match(
      again.stdout,
      /"colony token create" issues another owner token/,
      'points to the command that revokes nothing',
    );
    assert.doesNotMatch(again.stdout, /token rotate/);
    assert.doesNotMatch(again.stdout, /colony_/);
    const json = JSON.parse(colony(['init', '--data', dir, '--json']).stdout);
    assert.deepEqual([json.created, json.owner, json.token], [false, 'alice', undefined]);
    const db = openDatabase(join(dir, 'colony.db'));
    const stored = db
      .prepare('SELECT data FROM es_events')
      .all()
      .map((r) => (r as { data: string }).data)
      .join('\n');
    db.close();
    assert.ok(!stored.includes(created.token), 'the token itself is never stored');
  });

  it('refuses a bad owner name and creates nothing', () => {
    const dir = join(scratch.dir, 'bad-owner');
    const r = colony(['init', '--data', dir, '--owner', 'Bad Name']);
    assert.equal(r.code, 1);
    oneLine(r.stderr);
    assert.match(r.stderr, /--owner "Bad Name" must match/);
    assert.equal(existsSync(dir), false);
  });

  it('takes the data dir from COLONY_DATA', () => {
    const dir = join(scratch.dir, 'from-env');
    const r = colony(['init', '--json'], { COLONY_DATA: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).data, dir);
  });
});

describe('colony verify', () => {
  it('exits 0 with the event count and chain head when the chain holds', () => {
    const dir = seeded('verify-ok', 3);
    const r = colony(['verify', '--data', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ok: 9 events, chain head [0-9a-f]{64} at position 9$/m);
    const json = JSON.parse(colony(['verify', '--data', dir, '--json']).stdout);
    assert.deepEqual([json.ok, json.events, json.head.position], [true, 9, 9]);
  });

  it('checks a head recorded earlier with --expect-head, refusing a malformed one', () => {
    const dir = seeded('verify-head', 2);
    const head = JSON.parse(colony(['verify', '--data', dir, '--json']).stdout).head as {
      position: number;
      hash: string;
    };
    assert.equal(colony(['verify', '--data', dir, '--expect-head', `${head.position}:${head.hash}`]).code, 0);
    const other = colony(['verify', '--data', dir, '--expect-head', `${head.position}:${'0'.repeat(64)}`]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, new RegExp(`verify failed at position ${head.position}: head_mismatch`));
    const bad = colony(['verify', '--data', dir, '--expect-head', 'latest']);
    assert.equal(bad.code, 1);
    oneLine(bad.stderr);
    assert.match(bad.stderr, /--expect-head must be POSITION:HASH/);
  });

  it('exits 1 naming the position and reason when a row was altered', () => {
    const dir = seeded('verify-bad', 3);
    const db = openDatabase(join(dir, 'colony.db'));
    db.exec('DROP TRIGGER es_events_no_update');
    db.prepare(`UPDATE es_events SET data = replace(data, 'note 1', 'note X') WHERE position = 7`).run();
    db.close();
    const r = colony(['verify', '--data', dir]);
    assert.equal(r.code, 1);
    oneLine(r.stderr);
    assert.match(r.stderr, /verify failed at position 7: hash_mismatch/);
    const json = colony(['verify', '--data', dir, '--json']);
    assert.equal(json.code, 1);
    assert.deepEqual(((j) => [j.ok, j.position, j.reason])(JSON.parse(json.stdout)), [false, 7, 'hash_mismatch']);
  });
});

describe('colony rebuild', () => {
  it('rebuilds the projections and ends with one line: events, seconds, events/s', () => {
    const dir = seeded('rebuild', 5);
    const r = colony(['rebuild', '--data', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`^rebuilt ${PRODUCT_NAMES}: 13 events in \\d+\\.\\d\\d s, [\\d,]+ events/s$`, 'm'),
    );
    const one = JSON.parse(colony(['rebuild', '--data', dir, '--projection', 'streams', '--json']).stdout);
    assert.deepEqual([one.projections, one.events], [['streams'], 13]);
  });

  it('refuses an unknown projection, naming the known ones', () => {
    const dir = seeded('rebuild-unknown', 1);
    const r = colony(['rebuild', '--data', dir, '--projection', 'nope']);
    assert.equal(r.code, 1);
    oneLine(r.stderr);
    assert.ok(r.stderr.includes(`unknown projection "nope" (known: ${PRODUCT_NAMES})`), r.stderr);
  });
});

describe('colony events tail', () => {
  let dir: string;
  before(() => {
    dir = seeded('tail', 3);
  });

  it('prints the last N events as lines, or as NDJSON with --json', () => {
    const text = colony(['events', 'tail', '--data', dir, '-n', '2']);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^\s+8 {2}\S+ {2}card-3@1 {2}CardOpened {2}\{"cardId":3/);
    const json = colony(['events', 'tail', '--data', dir, '--json', '--after', '7'])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      json.map((e) => [e.position, e.type, e.streamId]),
      [
        [8, 'CardOpened', 'card-3'],
        [9, 'CardCommented', 'card-3'],
      ],
    );
    assert.equal(json[0].meta.actor, 'tester');
  });

  it('ends cleanly on Ctrl-C that comes while --follow still prints the backlog', async () => {
    const dir = seeded('tail-long', 500); // ~1,000 events, ~300 KB of JSON: more than the pipe (64 KB) and this side's buffer hold
    const child = spawn(
      process.execPath,
      [COLONY_BIN, 'events', 'tail', '--data', dir, '--follow', '--json', '--after', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, COLONY_DATA: '' },
      },
    );
    const exited = new Promise<[number | null, string | null]>((r) =>
      child.on('exit', (code, signal) => r([code, signal])),
    );
    // Nothing is read until the signal is sent: the child is held mid-backlog by the full pipe.
    await new Promise((r) => child.stdout.once('readable', r));
    child.kill('SIGINT');
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    assert.deepEqual(await exited, [0, null], err);
    const lines = out.trimEnd().split('\n');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { position: number }).position),
      lines.map((_, i) => i + 1),
      'the backlog, whole',
    );
    assert.ok(lines.length >= 1000, String(lines.length));
  });

  it('follows new events as another process appends them', async () => {
    const live = colonyLive([
      'events',
      'tail',
      '--data',
      dir,
      '--follow',
      '--json',
      '--interval',
      '20',
      '--after',
      '8',
    ]);
    try {
      await live.waitFor(/"position":9/); // it is running and has printed the backlog
      const engine = Engine.open({ file: join(dir, 'colony.db'), projections: productProjections });
      const id = openCard(engine, 'Appended while following');
      engine.close();
      const line = await live.waitFor(/"type":"CardOpened"/);
      assert.equal(JSON.parse(line).data.cardId, id);
    } finally {
      const code = await live.stop('SIGINT');
      assert.equal(
        code,
        0,
        `exit ${code}, signal ${live.proc.signalCode}; stdout: ${live.stdoutLines.join('\n')}; stderr: ${live.stderrLines.join('\n')}`,
      );
    }
  });
});

describe('colony serve', () => {
  it('initializes a fresh data dir, prints the owner token once and answers GET /health over a real socket', async () => {
    const dir = join(scratch.dir, 'serve');
    const live = colonyLive(['serve', '--data', dir, '--port', '0']);
    try {
      const line = await live.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 'stderr');
      const base = line.match(/http:\/\/127\.0\.0\.1:\d+/)![0];
      const tokenLine = await live.waitFor(/Owner "owner" token \(shown once, keep it\): colony_/, 'stderr');
      assert.ok(tokenLine);
      await live.waitFor(/"Authorization": "Bearer \$\{COLONY_TOKEN\}"/, 'stderr');
      await live.waitFor(new RegExp(`"url": "${base.replaceAll('.', '\\.')}/mcp"`), 'stderr');
      assert.equal(live.stdoutLines.length, 0, 'stdout stays empty');
      const health = await fetch(`${base}/health`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok', position: 3 }); // UserCreated, TokenIssued, SigningKeyAdopted
      const missing = await fetch(`${base}/nope`);
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'ErrNotFound');
      assert.ok(existsSync(join(dir, 'colony.db')));
    } finally {
      assert.equal(await live.stop(), 0);
    }
  });

  it('the .mcp.json snippet it prints works from any directory: stdio by absolute paths, never a bare npx package', async () => {
    // Started with a relative --data in the scratch dir; the client runs the snippet from / with only the token.
    const live = colonyLive(['serve', '--data', 'snippet-data', '--port', '0', '--sandbox', 'off'], {}, scratch.dir);
    try {
      const token = /token \(shown once, keep it\): (\S+)/.exec(
        await live.waitFor(/Owner "owner" token/, 'stderr'),
      )![1]!;
      await live.waitFor(/^Clients that sign in with OAuth/, 'stderr');
      const lines = live.stderrLines;
      const start = lines.findIndex((l) => l.startsWith('Connect an MCP client')) + 1;
      const end = lines.findIndex((l) => l.startsWith('Clients that sign in with OAuth'));
      const snippet = JSON.parse(lines.slice(start, end).join('\n')) as {
        mcpServers: Record<string, { command?: string; args?: string[]; env?: Record<string, string> }>;
      };
      const stdio = snippet.mcpServers['colony-stdio']!;
      assert.ok(isAbsolute(stdio.command!) && stdio.command !== 'npx', `an absolute command: ${stdio.command}`);
      assert.equal(stdio.args![stdio.args!.indexOf('--data') + 1], join(scratch.dir, 'snippet-data'));
      assert.deepEqual(stdio.env, { COLONY_TOKEN: '${COLONY_TOKEN}' });
      const client = new Client({ name: 'snippet-client', version: '0' });
      await client.connect(
        new StdioClientTransport({
          command: stdio.command!,
          args: stdio.args!,
          cwd: '/',
          env: { PATH: '/usr/bin:/bin', COLONY_TOKEN: token },
          stderr: 'ignore',
        }),
      );
      try {
        const who = await client.callTool({ name: 'whoami', arguments: {} });
        assert.equal((who.structuredContent as { name: string }).name, 'owner');
      } finally {
        await client.close();
      }
    } finally {
      assert.equal(await live.stop(), 0);
    }
  });

  it('refuses a bad COLONY_GOAL_STALL_SEC with one line naming it, before anything is written', () => {
    const dir = join(scratch.dir, 'serve-bad-stall');
    for (const bad of ['abc', '0', '1.5']) {
      const r = colony(['serve', '--data', dir, '--port', '0'], { COLONY_GOAL_STALL_SEC: bad });
      assert.equal(r.code, 1);
      oneLine(r.stderr);
      assert.equal(
        r.stderr.trim(),
        `colony: ErrInvalidInput: COLONY_GOAL_STALL_SEC must be a positive integer, not "${bad}"`,
      );
      assert.equal(existsSync(dir), false, 'no data dir');
    }
  });

  it('refuses a port that is taken with one clear line', async () => {
    const dir = join(scratch.dir, 'serve-busy');
    const live = colonyLive(['serve', '--data', dir, '--port', '0']);
    try {
      const port = (await live.waitFor(/listening on/, 'stderr')).match(/:(\d+) /)![1]!;
      const r = colony(['serve', '--data', join(scratch.dir, 'serve-busy-2'), '--port', port]);
      assert.equal(r.code, 1);
      oneLine(r.stderr);
      assert.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
      // The port is checked before anything is written: no data dir, no owner whose token was never shown.
      assert.equal(existsSync(join(scratch.dir, 'serve-busy-2')), false, 'no data dir left behind');
    } finally {
      await live.stop();
    }
  });
});

describe('output to a reader that goes away', () => {
  it('`colony events tail | head`: the command ends quietly with status 0, no EPIPE trace', async () => {
    const dir = seeded('closed-pipe', 1500); // 3,002 events: far more than a pipe holds
    for (const args of [
      ['events', 'tail', '--after', '0'],
      ['events', 'tail', '--after', '0', '--json'],
    ]) {
      const proc = spawn(process.execPath, [COLONY_BIN, ...args, '--data', dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, COLONY_DATA: '' },
      });
      let stderr = '';
      proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      proc.stdout.once('data', () => proc.stdout.destroy()); // `head` read its lines and left
      const code = await new Promise<number | null>((resolve) => proc.on('close', resolve));
      assert.deepEqual([code, stderr], [0, ''], args.join(' '));
    }
  });
});

describe('colony init on a PostgreSQL store', { skip: pgSkip }, () => {
  it('makes a missing data dir (owner-only) for the keys; a second init finds the owner', async (t) => {
    const pg = pgScratch();
    t.after(() => pg.drop());
    const dir = join(scratch.dir, 'pg-init', 'not', 'there');
    const first = colony(['--store', pg.url, 'init', '--data', dir, '--json']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).created, true);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.ok(existsSync(join(dir, 'secrets.key')) && !existsSync(join(dir, 'colony.db')), 'the keys, no SQLite log');
    const again = colony(['--store', pg.url, 'init', '--data', dir, '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual([JSON.parse(again.stdout).created, JSON.parse(again.stdout).owner], [false, 'owner']);
  });
});
