import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { colony, oneLine, stdioClient } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/** Owner tokens, agents and the audit trail through the real CLI — and `colony stdio` through a real SDK client. */
const scratch = tempDir('colony-cli-principals-');
after(() => scratch.cleanup());

const eventCount = (dir: string): number => JSON.parse(colony(['verify', '--data', dir, '--json']).stdout).events;

describe('owner tokens and agents', () => {
  let dir: string;
  let ownerToken: string;
  const prompt = join(scratch.dir, 'prompt.txt');
  before(() => {
    dir = join(scratch.dir, 'data');
    ownerToken = JSON.parse(colony(['init', '--data', dir, '--json']).stdout).token;
    writeFileSync(prompt, 'You review pull requests carefully and say what to change.');
  });

  it('rotates the owner token: the old one stops working over stdio, the new one works', async () => {
    const r = colony(['token', 'rotate', '--data', dir, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const { owner, token } = JSON.parse(r.stdout);
    assert.equal(owner, 'owner');
    assert.notEqual(token, ownerToken);
    const refused = colony(['stdio', '--data', dir], { COLONY_TOKEN: ownerToken });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /ErrUnauthorized: COLONY_TOKEN is missing, unknown or revoked/);
    const client = await stdioClient(dir, token);
    const who = await client.callTool({ name: 'whoami', arguments: {} });
    assert.deepEqual((who.structuredContent as { kind: string; name: string }).kind, 'owner');
    await client.close();
    ownerToken = token;
  });

  it('creates an extra owner token that works beside the first', async () => {
    const extra = JSON.parse(colony(['token', 'create', '--data', dir, '--json', '--label', 'laptop']).stdout)
      .token as string;
    for (const token of [extra, ownerToken]) {
      const client = await stdioClient(dir, token);
      assert.equal((await client.callTool({ name: 'whoami', arguments: {} })).isError, undefined);
      await client.close();
    }
  });

  it('registers a root agent, prints its token once, and the agent sees exactly the tools in its scope over stdio', async () => {
    const r = colony([
      'agents',
      'create',
      'reviewer',
      '--data',
      dir,
      '--model',
      'claude-sonnet',
      '--prompt-file',
      prompt,
      '--tools',
      'whoami,my_status',
      '--tier',
      'assisted',
      '--command',
      'echo hi',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const agent = JSON.parse(r.stdout);
    assert.deepEqual({ ...agent, token: typeof agent.token }, { id: 1, name: 'reviewer', token: 'string' });
    const client = await stdioClient(dir, agent.token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ['my_status', 'whoami'], 'tools/list shows its scope, nothing more');
    const me = (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as Record<string, unknown>;
    assert.deepEqual([me.kind, me.name, me.tool_scope], ['agent', 'reviewer', ['my_status', 'whoami']]);
    await client.close();
    const list = JSON.parse(colony(['agents', 'list', '--data', dir, '--json']).stdout);
    assert.deepEqual(
      list.map((a: { name: string; tier: string; command: string }) => [a.name, a.tier, a.command]),
      [['reviewer', 'assisted', 'echo hi']],
    );
    assert.equal('systemPrompt' in list[0], false);
  });

  it('refuses bad agent options with one clear line and writes nothing', () => {
    const before = eventCount(dir);
    const cases: [string[], RegExp][] = [
      [
        ['agents', 'create', 'reviewer', '--model', 'm', '--prompt-file', prompt, '--tools', 'whoami'],
        /ErrAgentNameTaken: an agent named reviewer already exists/,
      ],
      [
        ['agents', 'create', 'helper', '--model', 'm', '--prompt-file', prompt, '--tools', 'whoami', '--tier', 'god'],
        /--tier must be one of supervised, assisted, autonomous/,
      ],
      [
        [
          'agents',
          'create',
          'helper',
          '--model',
          'm',
          '--prompt-file',
          join(scratch.dir, 'none.txt'),
          '--tools',
          'whoami',
        ],
        /cannot read --prompt-file .*ENOENT/,
      ],
      [
        ['agents', 'create', 'helper', '--model', 'm', '--prompt-file', prompt, '--tools', ' , '],
        /--tools must name at least one tool/,
      ],
      [
        ['agents', 'create', 'Bad_Name', '--model', 'm', '--prompt-file', prompt, '--tools', 'whoami'],
        /ErrInvalidInput: name "Bad_Name" must match/,
      ],
      [
        ['agents', 'create', 'helper', '--prompt-file', prompt, '--tools', 'whoami'],
        /required option '--model <model>' not specified/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = colony([...args, '--data', dir]);
      assert.equal(r.code, 1, args.join(' '));
      oneLine(r.stderr);
      assert.match(r.stderr, message);
    }
    assert.equal(eventCount(dir), before);
  });
});

describe('colony audit', () => {
  it('tails the trail with filters and exports it as JSON lines', async () => {
    const dir = join(scratch.dir, 'audit');
    const token = JSON.parse(colony(['init', '--data', dir, '--json']).stdout).token as string;
    const client = await stdioClient(dir, token);
    await client.callTool({ name: 'whoami', arguments: {} });
    await client.callTool({ name: 'whoami', arguments: { unexpected: true } });
    await client.callTool({ name: 'revoke_token', arguments: { token_id: 1, reason: 'just asking' } });
    await client.close();
    const all = colony(['audit', 'tail', '--data', dir, '--json'])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      all.map((r) => [r.principal, r.tool, r.outcome, r.errorCode]),
      [
        ['user:owner', 'whoami', 'success', null],
        ['user:owner', 'whoami', 'error', 'ErrInvalidInput'],
        ['user:owner', 'revoke_token', 'pending_confirmation', null],
      ],
    );
    for (const r of all) assert.match(r.argsDigest, /^[0-9a-f]{64}$/);
    const errors = colony(['audit', 'tail', '--data', dir, '--status', 'error']).stdout.trim().split('\n');
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /whoami {2}error ErrInvalidInput/);
    assert.equal(
      colony(['audit', 'tail', '--data', dir, '--tool', 'revoke_token', '--json']).stdout.trim().split('\n').length,
      1,
    );
    const out = join(dir, 'audit.jsonl');
    const exported = colony(['audit', 'export', '--data', dir, '--out', out]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /exported 3 audit rows/);
    assert.deepEqual(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      all,
    );
    const again = colony(['audit', 'export', '--data', dir, '--out', out]);
    assert.equal(again.code, 1, 'an existing file is never overwritten');
    assert.match(again.stderr, /cannot write .*EEXIST/);
    const bad = colony(['audit', 'tail', '--data', dir, '--status', 'weird']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--status must be one of success, error, blocked, pending_confirmation/);
    assert.ok(existsSync(join(dir, 'audit.db')));
  });
});
