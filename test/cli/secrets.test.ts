import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildSecretEnv } from '../../src/actions/secrets/env.js';
import { getResourceRequest } from '../../src/projections/resources.js';
import { CommandVerifier } from '../../src/runtime/verifier.js';
import { colony, COLONY_BIN, type CliResult, colonyFails } from '../helpers/cli.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { ok, approvedTask } from '../helpers/calls.js';

/**
 * `colony secrets set|list|revoke` as separate processes on the data dir of a live in-process Colony
 * : values from the argument or stdin, never printed; bad input is one line on stderr,
 * exit 1, nothing appended. And the loop that gets an agent a missing secret: its request over MCP, the owner's
 * `secrets set` from the CLI fulfils it and DMs the agent, and the task's command verifier sees the value.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;
const VALUE = 'cli-secret-Zq8w!x y';
const sha = (v: string) => createHash('sha256').update(v).digest('hex');

interface World {
  f: McpFixture;
  owner: Client;
  worker: Client;
  goalId: number;
  taskId: number;
}
/** `check`: a command line the owner registers as the task's verifier recipe. */
async function world(t: TestContext, check?: string): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  if (check !== undefined) await ok(owner, 'add_verifier', { name: 'check', command: check });
  const leaf = check === undefined ? {} : { verifier_config: { kind: 'command', recipe: 'check' } };
  const { goalId, taskId } = await approvedTask(owner, leaf);
  return { f, owner, worker: await f.connect(f.agentToken), goalId, taskId };
}

/** The CLI with stdin (spawnSync input); `colony()` for the rest. */
function cli(w: World, args: string[], input?: string): CliResult {
  if (input === undefined) return colony([...args, '--data', w.f.dataDir]);
  const r = spawnSync(process.execPath, [COLONY_BIN, ...args, '--data', w.f.dataDir], {
    input,
    encoding: 'utf8',
    env: { ...process.env, COLONY_DATA: '' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function passes(w: World, args: string[], input?: string): CliResult {
  const r = cli(w, args, input);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  assert.ok(!r.stdout.includes(VALUE) && !r.stderr.includes(VALUE), 'the value is never printed');
  return r;
}
const json = (w: World, args: string[], input?: string) =>
  JSON.parse(passes(w, [...args, '--json'], input).stdout) as unknown;

/** A refusal (see colonyFails) that does not print the value. */
function fails(w: World, args: string[], pattern: RegExp): void {
  assert.ok(!colonyFails(w.f.dataDir, args, pattern).stderr.includes(VALUE));
}

describe('colony secrets', () => {
  it('set, list, revoke — by argument and from stdin; list shows names, scopes, use, never values', async (t) => {
    const w = await world(t);
    const first = json(w, ['secrets', 'set', 'api_key', VALUE, '--scope', 'agent:worker']) as Body;
    assert.deepEqual(first, {
      secret_id: first.secret_id,
      name: 'API_KEY',
      scope: 'agent:worker',
      replaced: null,
      fulfilled_requests: [],
    });
    const text = passes(w, ['secrets', 'set', 'API_KEY', '-', '--scope', 'agent:worker'], `${VALUE}-v2\n`).stdout;
    assert.match(
      text,
      new RegExp(`^Set secret API_KEY for agent:worker \\(id \\d+, replacing secret ${first.secret_id}\\)\\n$`),
    );
    passes(w, ['secrets', 'set', 'TEAM', VALUE, '--scope', 'user:owner']);
    const dashed = `-${VALUE}`;
    const r = cli(w, ['secrets', 'set', 'DASHED', dashed, '--scope', 'user:owner']);
    assert.equal(r.code, 0, 'a value starting with "-" is a value, not an unknown option');
    assert.ok(!r.stderr.includes(dashed) && !r.stdout.includes(dashed), 'and it is never echoed');
    passes(w, ['secrets', 'revoke', 'DASHED', '--scope', 'user:owner']);
    passes(w, ['secrets', 'set', 'TASK_ONLY', VALUE, '--scope', `task:${w.taskId}`]);
    assert.deepEqual(
      buildSecretEnv(w.f.app, { ownerId: w.f.owner.userId, agentId: w.f.agent.agentId }),
      { API_KEY: `${VALUE}-v2`, TEAM: VALUE },
      'stdin minus its trailing newline; the newest value wins',
    );
    const rows = json(w, ['secrets', 'list']) as Body[];
    assert.deepEqual(
      rows.map((r) => [r.name, r.scope, r.available, typeof r.last_used_at]),
      [
        ['API_KEY', 'agent:worker', true, 'string'],
        ['TASK_ONLY', `task:${w.taskId}`, true, 'object'],
        ['TEAM', 'user:owner', true, 'string'],
      ],
    );
    assert.deepEqual(Object.keys(rows[0]!).sort(), [
      'available',
      'created_at',
      'id',
      'last_used_at',
      'name',
      'revoked_at',
      'scope',
      'scope_id',
      'scope_type',
    ]);
    assert.deepEqual(
      (json(w, ['secrets', 'list', '--scope', 'agent:worker', '--all']) as Body[]).map((r) => [r.id, r.available]),
      [
        [first.secret_id, false],
        [rows[0]!.id, true],
      ],
    );
    assert.match(
      passes(w, ['secrets', 'list']).stdout,
      /API_KEY {2}agent:worker {2}available {2}set \S+ {2}last used 20/,
    );
    assert.match(
      passes(w, ['secrets', 'revoke', 'api_key', '--scope', 'agent:worker']).stdout,
      /^Revoked secret \d+ \(API_KEY, agent:worker\)\n$/,
    );
    assert.deepEqual(json(w, ['secrets', 'revoke', '--id', String(rows[2]!.id)]), {
      secret_id: rows[2]!.id,
      name: 'TEAM',
      scope: 'user:owner',
      status: 'revoked',
      revoked_at: (json(w, ['secrets', 'list', '--all']) as Body[]).find((r) => r.name === 'TEAM')!.revoked_at,
    });
    assert.deepEqual(
      (json(w, ['secrets', 'list']) as Body[]).map((r) => r.name),
      ['TASK_ONLY'],
    );
    fails(w, ['secrets', 'revoke', '--id', String(rows[2]!.id)], /^colony: ErrAlreadyRevoked: /);
  });

  it('bad input: one line on stderr, exit 1, nothing appended', async (t) => {
    const w = await world(t);
    passes(w, ['secrets', 'set', 'KEY', VALUE, '--scope', 'agent:worker']);
    for (const name of ['BAD-NAME', 'with space', 'dot.name', 'unicode_é', '1KEY'])
      fails(w, ['secrets', 'set', name, VALUE, '--scope', 'agent:worker'], /^colony: ErrInvalidName: /);
    fails(
      w,
      ['secrets', 'set', VALUE, 'KEY', '--scope', 'agent:worker'],
      /^colony: ErrInvalidName: invalid secret name: /,
    ); // swapped: the value is not echoed
    for (const scope of ['worker', 'team:x', 'task:abc', 'agent:'])
      fails(w, ['secrets', 'set', 'KEY', VALUE, '--scope', scope], /^colony: ErrInvalidScope: /);
    fails(
      w,
      ['secrets', 'set', 'KEY', VALUE, '--scope', 'agent:nobody'],
      /^colony: ErrNotFound: agent nobody not found$/,
    );
    fails(w, ['secrets', 'set', 'KEY', VALUE, '--scope', 'task:999'], /^colony: ErrTaskNotFound: /);
    fails(w, ['secrets', 'set', 'KEY', VALUE], /--scope/);
    fails(w, ['secrets', 'list', '--scope', 'agent:nobody'], /^colony: ErrNotFound: /);
    fails(w, ['secrets', 'revoke', 'KEY'], /^colony: give NAME with --scope, or --id ID$/);
    fails(
      w,
      ['secrets', 'revoke', 'KEY', '--scope', 'agent:worker', '--id', '1'],
      /^colony: give either --id ID, or NAME with --scope$/,
    );
    fails(w, ['secrets', 'revoke', '--id', 'abc'], /^colony: --id must be a positive integer/);
    fails(w, ['secrets', 'revoke', '--id', '999'], /^colony: ErrNotFound: secret 999 not found$/);
    fails(
      w,
      ['secrets', 'revoke', 'NOPE', '--scope', 'agent:worker'],
      /^colony: ErrNotFound: no active secret NOPE in agent:worker$/,
    );
    const empty = tempDir('colony-cli-secrets-');
    t.after(() => empty.cleanup());
    const r = colony(['secrets', 'list', '--data', empty.dir]);
    assert.deepEqual([r.code, /no Colony data/.test(r.stderr)], [1, true]);
  });

  it('a missing secret, end to end: request_resource → `secrets set` → request fulfilled, the agent DMed, the command verifier sees the value', async (t) => {
    const cmd = 'test -n "$BREVO_API_KEY" && printf %s "$BREVO_API_KEY" | sha256sum && echo "using $BREVO_API_KEY"';
    const w = await world(t, cmd);
    const verifier = new CommandVerifier(w.f.app).start();
    t.after(() => verifier.stop());
    const r = await ok(w.worker, 'request_resource', {
      name: 'BREVO_API_KEY',
      resource_type: 'api_key',
      reason: 'send the weekly report',
      task_id: w.taskId,
    });
    assert.deepEqual(await ok(w.worker, 'list_resources', { task_id: w.taskId }), { resources: [] });
    // A command verifier gets the task's secrets (never the agent's or the owner's by default), so the owner sets it for the task.
    const set = json(w, ['secrets', 'set', 'BREVO_API_KEY', '-', '--scope', `task:${w.taskId}`], VALUE) as Body;
    assert.deepEqual(set.fulfilled_requests, [r.request_id]);
    assert.equal(getResourceRequest(w.f.app.engine.db, r.request_id as number)!.status, 'fulfilled');
    const dms = (await ok(w.worker, 'read_inbox', { include_read: true })).messages as { body: string }[];
    assert.equal(dms.length, 1);
    assert.match(dms[0]!.body, new RegExp(`fulfilled: BREVO_API_KEY \\(task:${w.taskId}\\)`));
    assert.deepEqual(await ok(w.worker, 'list_resources', { task_id: w.taskId }), {
      resources: [{ name: 'BREVO_API_KEY', scope: 'task', available: true }],
    });
    await ok(w.worker, 'claim_task', { task_id: w.taskId });
    await ok(w.worker, 'complete_task', { task_id: w.taskId, summary: 'sent' });
    await verifier.idle();
    const leaf = ((await ok(w.owner, 'get_goal', { goal_id: w.goalId })).tasks_tree as Body[])[0]!;
    assert.equal(leaf.status, 'done', String(leaf.verifier_output));
    assert.equal(leaf.verifier_output, `${sha(VALUE)}  -\nusing ***\n`);
    const listed = (json(w, ['secrets', 'list']) as Body[])[0]!;
    assert.equal(typeof listed.last_used_at, 'string', 'the verifier run is the use');
  });
});
