import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setSecret } from '../../../src/actions/secrets.js';
import { getResourceRequest } from '../../../src/projections/resources.js';
import { listSecrets } from '../../../src/projections/secrets.js';
import { CommandVerifier } from '../../../src/runtime/verifier.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { ok, refused, approvedTask } from '../../helpers/calls.js';

/**
 * An agent asks for a missing resource, through a real MCP Client: a request is recorded and posted to #requests; the owner's secret fulfils it and DMs the
 * requester; the command verifier gets it as an env var; tools show names and availability only. Plus
 * revoke_secret (owner, destructive) and bad input for each tool, which appends nothing.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;
type Msg = { body: string; from: string; metadata: Body | null };
const VALUE = 'xkeysib-0123456789abcdef';
const sha = (v: string) => createHash('sha256').update(v).digest('hex');

interface World {
  f: McpFixture;
  owner: Client;
  worker: Client;
  helper: Client;
  stranger: Client;
  goalId: number;
  taskId: number;
  otherTaskId: number;
}

/** `check`: a command line the owner registers as the task's verifier recipe (the only way a command verifier runs). */
async function world(t: TestContext, check?: string): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const helper = f.addAgent('helper');
  const other = f.addOwner('other-owner');
  const w = {
    f,
    owner: await f.connect(f.ownerToken),
    worker: await f.connect(f.agentToken),
    helper: await f.connect(helper.token),
    stranger: await f.connect(f.addAgent('outsider', { ownerId: other.userId }).token),
    goalId: 0,
    taskId: 0,
    otherTaskId: 0,
  };
  if (check !== undefined) await ok(w.owner, 'add_verifier', { name: 'check', command: check });
  ({ goalId: w.goalId, taskId: w.taskId } = await approvedTask(
    w.owner,
    check === undefined ? {} : { verifier_config: { kind: 'command', recipe: 'check' } },
  ));
  w.otherTaskId = (await approvedTask(await f.connect(other.token))).taskId;
  return w;
}

/** A destructive owner tool: ask, then confirm with the token. */
async function confirmed(client: Client, name: string, args: Body): Promise<Awaited<ReturnType<typeof callTool>>> {
  const first = await ok(client, name, args);
  assert.equal(first.confirmation_required, true);
  return callTool(client, name, { ...args, confirmation_token: first.confirm_token });
}

const ownerBy = (w: World) => ({ key: `user-${w.f.owner.userId}`, name: 'owner', tenant: w.f.owner.userId });
const setAs = (w: World, name: string, scope: string, value = VALUE) =>
  setSecret(w.f.app, ownerBy(w), { name, value, scope }, { actor: 'user:owner' });
const request = (w: World, over: Body = {}) =>
  ok(w.worker, 'request_resource', {
    name: 'BREVO_API_KEY',
    resource_type: 'api_key',
    reason: 'send the weekly report',
    task_id: w.taskId,
    ...over,
  });
const inbox = async (c: Client) => (await ok(c, 'read_inbox', { include_read: true, limit: 100 })).messages as Msg[];

describe('an agent requests a missing resource', () => {
  it('request_resource records a pending request and posts {resource_name, resource_type, reason, task_id} to #requests', async (t) => {
    const w = await world(t);
    const r = await request(w, { name: 'brevo_api_key' });
    assert.deepEqual(Object.keys(r).sort(), ['request_id', 'request_message_id']);
    const row = getResourceRequest(w.f.app.engine.db, r.request_id as number)!;
    assert.deepEqual(
      [row.status, row.name, row.resourceType, row.taskId, row.requesterName],
      ['pending', 'BREVO_API_KEY', 'api_key', w.taskId, 'worker'],
    );
    const messages = (await ok(w.owner, 'get_channel_messages', { channel_name: 'requests' })).messages as (Msg & {
      message_id: number;
    })[];
    const posted = messages.find((m) => m.message_id === r.request_message_id)!;
    assert.equal(posted.from, 'worker');
    assert.deepEqual(posted.metadata, {
      kind: 'resource_request',
      request_id: r.request_id,
      resource_name: 'BREVO_API_KEY',
      resource_type: 'api_key',
      reason: 'send the weekly report',
      task_id: w.taskId,
    });
    const head = w.f.app.engine.head().position;
    assert.deepEqual(await request(w), r, 'asking again while pending returns the same request');
    assert.equal(w.f.app.engine.head().position, head);
  });

  it('a secret set for the requester fulfils the request and DMs it — a secret for someone else does not', async (t) => {
    const w = await world(t);
    const r = await request(w);
    assert.deepEqual(
      setAs(w, 'BREVO_API_KEY', 'agent:helper').fulfilled,
      [],
      "another agent's scope does not reach the requester",
    );
    assert.equal((await inbox(w.worker)).length, 0);
    const s = setAs(w, 'BREVO_API_KEY', 'agent:worker');
    assert.deepEqual(s.fulfilled, [r.request_id]);
    const row = getResourceRequest(w.f.app.engine.db, r.request_id as number)!;
    assert.deepEqual(
      [row.status, row.fulfilledBySecret, row.fulfilledScope],
      ['fulfilled', s.secretId, 'agent:worker'],
    );
    assert.ok(row.fulfilledAt);
    const dms = await inbox(w.worker);
    assert.equal(dms.length, 1);
    assert.match(dms[0]!.body, /request #\d+ is fulfilled: BREVO_API_KEY \(agent:worker\)/);
    assert.equal(dms[0]!.metadata?.request_id, r.request_id);
    assert.ok(!JSON.stringify(dms).includes(VALUE));
    assert.deepEqual(
      setAs(w, 'BREVO_API_KEY', 'agent:worker').fulfilled,
      [],
      'a fulfilled request is not fulfilled again',
    );
  });

  it('task and user scopes reach the requester too', async (t) => {
    const w = await world(t);
    const a = await request(w, { name: 'TASK_KEY' });
    const b = await request(w, { name: 'TEAM_KEY', resource_type: 'url' });
    const c = await ok(w.helper, 'request_resource', {
      name: 'TEAM_KEY',
      resource_type: 'url',
      reason: 'the same for me',
      task_id: w.taskId,
    });
    assert.deepEqual(setAs(w, 'TASK_KEY', `task:${w.taskId}`).fulfilled, [a.request_id]);
    assert.deepEqual(setAs(w, 'TEAM_KEY', 'user:owner').fulfilled, [b.request_id, c.request_id]);
    assert.equal((await inbox(w.helper)).length, 1);
  });

  it("the command verifier of the task gets the task's secret as an env var — never the agent's or the owner's; its recorded output never holds the value", async (t) => {
    const cmd = 'test -n "$BREVO_API_KEY" && echo "key is $BREVO_API_KEY" && printf %s "$BREVO_API_KEY" | sha256sum';
    const w = await world(t, cmd);
    const running = new CommandVerifier(w.f.app).start();
    t.after(() => running.stop());
    await request(w);
    setAs(w, 'BREVO_API_KEY', 'user:owner', 'user-scope-never-given');
    setAs(w, 'BREVO_API_KEY', 'agent:worker', 'agent-scope-never-given');
    const { secretId } = setAs(w, 'BREVO_API_KEY', `task:${w.taskId}`);
    await ok(w.worker, 'claim_task', { task_id: w.taskId });
    await ok(w.worker, 'complete_task', { task_id: w.taskId, summary: 'sent' });
    await running.idle();
    const leaf = ((await ok(w.owner, 'get_goal', { goal_id: w.goalId })).tasks_tree as Body[])[0]!;
    assert.equal(leaf.status, 'done', String(leaf.verifier_output));
    assert.match(
      leaf.verifier_output as string,
      new RegExp(`key is \\*\\*\\*\\n${sha(VALUE)}`),
      'the task scope reached the verifier',
    );
    assert.ok(!(leaf.verifier_output as string).includes(VALUE));
    const used = listSecrets(w.f.app.engine.db, w.f.owner.userId).find((s) => s.secretId === secretId)!;
    assert.ok(used.lastUsedAt, 'last_used_at records the use');
  });

  it('list_resources shows names, scopes and availability only: user + own agent scope, task scope when asked', async (t) => {
    const w = await world(t);
    setAs(w, 'TEAM_KEY', 'user:owner');
    setAs(w, 'MY_KEY', 'agent:worker');
    setAs(w, 'HELPER_KEY', 'agent:helper');
    setAs(w, 'MY_KEY', `task:${w.taskId}`);
    const mine = await ok(w.worker, 'list_resources');
    assert.deepEqual(mine, {
      resources: [
        { name: 'MY_KEY', scope: 'agent', available: true },
        { name: 'TEAM_KEY', scope: 'user', available: true },
      ],
    });
    const withTask = await ok(w.worker, 'list_resources', { task_id: w.taskId });
    assert.deepEqual(
      (withTask.resources as Body[]).map((r) => `${r.name}/${r.scope}`),
      ['MY_KEY/task', 'MY_KEY/agent', 'TEAM_KEY/user'],
    );
    assert.deepEqual(
      ((await ok(w.helper, 'list_resources')).resources as Body[]).map((r) => r.name),
      ['HELPER_KEY', 'TEAM_KEY'],
    );
    assert.deepEqual(
      ((await ok(w.owner, 'list_resources', { task_id: w.taskId })).resources as Body[]).map(
        (r) => `${r.name}/${r.scope}`,
      ),
      ['MY_KEY/task', 'TEAM_KEY/user'],
    );
    assert.deepEqual(await ok(w.stranger, 'list_resources'), { resources: [] });
    assert.ok(![mine, withTask].some((r) => JSON.stringify(r).includes(VALUE)));
  });
});

describe('revoke_secret (owner, destructive)', () => {
  it('asks for confirmation, then revokes: gone from list_resources; again is ErrAlreadyRevoked', async (t) => {
    const w = await world(t);
    const { secretId } = setAs(w, 'MY_KEY', 'agent:worker');
    const head = w.f.app.engine.head().position;
    const first = await ok(w.owner, 'revoke_secret', { secret_id: secretId });
    assert.equal(first.confirmation_required, true);
    assert.equal(w.f.app.engine.head().position, head, 'asking appends nothing');
    const { result, body } = await confirmed(w.owner, 'revoke_secret', { secret_id: secretId });
    assert.ok(!result.isError, textOf(result));
    assert.deepEqual(
      [body.secret_id, body.name, body.scope, body.status],
      [secretId, 'MY_KEY', 'agent:worker', 'revoked'],
    );
    assert.deepEqual(await ok(w.worker, 'list_resources'), { resources: [] });
    const again = await confirmed(w.owner, 'revoke_secret', { secret_id: secretId });
    assert.match(textOf(again.result), /^ErrAlreadyRevoked: /);
    setAs(w, 'MY_KEY', 'agent:worker');
    const byName = await confirmed(w.owner, 'revoke_secret', { name: 'my_key', scope: 'agent:worker' });
    assert.equal(byName.body.status, 'revoked');
  });

  it('refuses bad input, unknown and foreign secrets; agents do not see it', async (t) => {
    const w = await world(t);
    const { secretId } = setAs(w, 'MY_KEY', 'agent:worker');
    for (const args of [
      {},
      { secret_id: secretId, name: 'MY_KEY', scope: 'agent:worker' },
      { name: 'MY_KEY' },
      { scope: 'agent:worker' },
      { secret_id: 0 },
      { secret_id: secretId, extra: 1 },
    ]) {
      await refused(w.f, w.owner, 'revoke_secret', args, 'ErrInvalidInput');
    }
    for (const [args, code] of [
      [{ secret_id: 999 }, 'ErrNotFound'],
      [{ name: 'NOPE', scope: 'agent:worker' }, 'ErrNotFound'],
      [{ name: 'MY-KEY', scope: 'agent:worker' }, 'ErrInvalidName'],
      [{ name: 'MY_KEY', scope: 'team:x' }, 'ErrInvalidScope'],
      [{ name: 'MY_KEY', scope: `task:${w.otherTaskId}` }, 'ErrTaskNotFound'],
    ] as const) {
      const head = w.f.app.engine.head().position;
      const r = await confirmed(w.owner, 'revoke_secret', args);
      assert.match(textOf(r.result), new RegExp(`^${code}: `), JSON.stringify(args));
      assert.equal(w.f.app.engine.head().position, head);
    }
    await refused(w.f, w.worker, 'revoke_secret', { secret_id: secretId }, 'ErrToolNotFound');
  });
});

describe('bad input appends nothing', () => {
  it('request_resource', async (t) => {
    const w = await world(t);
    const base = {
      name: 'BREVO_API_KEY',
      resource_type: 'api_key',
      reason: 'send the weekly report',
      task_id: w.taskId,
    };
    const { task_id: _none, ...noTask } = base;
    await refused(w.f, w.worker, 'request_resource', noTask, 'ErrMissingTaskContext');
    await refused(w.f, w.worker, 'request_resource', { ...base, task_id: 999 }, 'ErrTaskNotFound');
    await refused(w.f, w.worker, 'request_resource', { ...base, task_id: w.otherTaskId }, 'ErrTaskNotFound');
    for (const name of ['BREVO-KEY', 'with space', '1KEY', 'unicode_é'])
      await refused(w.f, w.worker, 'request_resource', { ...base, name }, 'ErrInvalidName');
    for (const bad of [
      { name: '' },
      { resource_type: 'password' },
      { reason: 'abcd' },
      { reason: '     x   ' },
      { task_id: 'seven' },
      { extra: true },
    ]) {
      await refused(w.f, w.worker, 'request_resource', { ...base, ...bad }, 'ErrInvalidInput');
    }
    await refused(w.f, w.owner, 'request_resource', base, 'ErrForbidden');
  });

  it('list_resources', async (t) => {
    const w = await world(t);
    await refused(w.f, w.worker, 'list_resources', { task_id: 999 }, 'ErrTaskNotFound');
    await refused(w.f, w.worker, 'list_resources', { task_id: w.otherTaskId }, 'ErrTaskNotFound');
    await refused(w.f, w.worker, 'list_resources', { task_id: 'x' }, 'ErrInvalidInput');
    await refused(w.f, w.worker, 'list_resources', { scope: 'user' }, 'ErrInvalidInput');
  });
});
