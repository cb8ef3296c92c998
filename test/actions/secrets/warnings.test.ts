import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { requestRun } from '../../../src/actions/runs.js';
import { revokeSecret, setSecret } from '../../../src/actions/secrets.js';
import { readAll } from '../../../src/engine/store.js';
import { colony } from '../../helpers/cli.js';
import { ok, okText } from '../../helpers/calls.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';

/**
 * No dead end when a secret goes: revoking a secret that a running or queued task needed posts a
 * warning in the task's goal channel, naming the secret and the task — never the value — in the same
 * command as the revocation. Which tasks a secret reaches follows how Colony hands secrets out: a task
 * scope its task; an agent scope the tasks that agent holds or has a queued or running run for; the user
 * scope every task held or with a pending run (agent runs get all user-scope secrets) and the tasks whose
 * command-verifier recipe was granted the name. Finished tasks are never warned about.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;
type Msg = { body: string; from: string; kind: string; metadata: Body | null };
const VALUE = 'revoked-value-never-shown-7Qx';

interface World {
  f: McpFixture;
  owner: Client;
  goalId: number;
  channelId: number;
  /** root, held (claimed by worker), idle (approved), finished (done), checked (awaiting its command verifier, granted USER_KEY), queued (a queued run of runner). */
  t: { root: number; held: number; idle: number; finished: number; checked: number; queued: number };
}

async function world(t: TestContext): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const helper = f.addAgent('helper');
  const runner = f.addAgent('runner', { command: 'true' });
  const owner = await f.connect(f.ownerToken);
  const [worker, help] = [await f.connect(f.agentToken), await f.connect(helper.token)];
  await ok(owner, 'add_verifier', { name: 'check', command: 'true', secrets: ['USER_KEY'] });
  const leaf = (title: string, extra: Body = {}) => ({ title, description: `${title}: do it carefully`, ...extra });
  const g = await ok(owner, 'create_goal', {
    title: 'Weekly report',
    description: 'Send the weekly report to the team.',
    require_evidence: false, // the finished task is done by its auto verifier
  });
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: {
      ...leaf('Root'),
      children: [
        leaf('Held task'),
        leaf('Idle task'),
        leaf('Finished task'),
        leaf('Checked task', { verifier_config: { kind: 'command', recipe: 'check' } }),
        leaf('Queued task'),
      ],
    },
  });
  await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
  const tree = (await ok(owner, 'get_goal', { goal_id: g.goal_id })).tasks_tree as {
    id: number;
    children: { id: number }[];
  }[];
  const [held, idle, finished, checked, queued] = tree[0]!.children.map((c) => c.id) as [
    number,
    number,
    number,
    number,
    number,
  ];
  await ok(worker, 'claim_task', { task_id: held });
  await ok(worker, 'claim_task', { task_id: finished });
  await ok(worker, 'complete_task', { task_id: finished, summary: 'done' });
  await ok(help, 'claim_task', { task_id: checked });
  await ok(help, 'complete_task', { task_id: checked, summary: 'ready for the check' });
  assert.equal(
    requestRun(f.app, { agentId: runner.agentId, source: 'manual', taskId: queued, by: `user-${f.owner.userId}` }).kind,
    'queued',
  );
  return {
    f,
    owner,
    goalId: g.goal_id as number,
    channelId: g.channel_id as number,
    t: { root: tree[0]!.id, held, idle, finished, checked, queued },
  };
}

const ownerBy = (w: World) => ({ key: `user-${w.f.owner.userId}`, name: 'owner', tenant: w.f.owner.userId });
const set = (w: World, name: string, scope: string) =>
  setSecret(w.f.app, ownerBy(w), { name, value: VALUE, scope }, { actor: 'user:owner' });
const revoke = (w: World, name: string, scope: string) =>
  revokeSecret(w.f.app, ownerBy(w), { name, scope }, { actor: 'user:owner' });

async function warnings(w: World, name: string): Promise<Msg[]> {
  const messages = (await ok(w.owner, 'get_channel_messages', { channel_id: w.channelId, limit: 200 }))
    .messages as Msg[];
  assert.ok(!JSON.stringify(messages).includes(VALUE), 'no message holds the value');
  return messages.filter((m) => m.metadata?.event === 'SecretRevoked' && m.metadata.secret_name === name);
}
const taskIds = (ms: Msg[]) => ms.map((m) => m.metadata!.task_id as number).sort((a, b) => a - b);

describe('a revoked secret warns the goal channel of the unfinished tasks it reached', () => {
  it('agent scope: the tasks the agent holds or has a queued run for; the warning names the secret and the task', async (t) => {
    const w = await world(t);
    set(w, 'WORKER_KEY', 'agent:worker');
    set(w, 'RUNNER_KEY', 'agent:runner');
    set(w, 'HELPER_KEY', 'agent:helper');
    const s = revoke(w, 'WORKER_KEY', 'agent:worker');
    const [warning, ...rest] = await warnings(w, 'WORKER_KEY');
    assert.equal(rest.length, 0, 'only the held task: the finished one starts nothing more');
    assert.deepEqual([warning!.from, warning!.kind], ['system', 'system']);
    assert.equal(
      warning!.body,
      `⚠️ Secret WORKER_KEY (agent:worker) was revoked by owner; task #${w.t.held} "Held task" (claimed) needed it. ` +
        'The processes Colony starts for this task no longer get WORKER_KEY: set it again (colony secrets set WORKER_KEY - --scope agent:worker) or let the task go on without it.',
    );
    assert.deepEqual(warning!.metadata, {
      kind: 'system',
      event: 'SecretRevoked',
      secret_id: s.secretId,
      secret_name: 'WORKER_KEY',
      scope: 'agent:worker',
      task_id: w.t.held,
      goal_id: w.goalId,
      task_status: 'claimed',
    });
    revoke(w, 'RUNNER_KEY', 'agent:runner');
    assert.deepEqual(taskIds(await warnings(w, 'RUNNER_KEY')), [w.t.queued], 'a queued run of the agent');
    revoke(w, 'HELPER_KEY', 'agent:helper');
    assert.deepEqual(
      await warnings(w, 'HELPER_KEY'),
      [],
      "helper's task awaits its verifier, which never gets agent secrets",
    );
  });

  it('task scope: its task unless it is finished — and the warning is part of the revoking command', async (t) => {
    const w = await world(t);
    set(w, 'TASK_KEY', `task:${w.t.idle}`);
    set(w, 'TASK_KEY', `task:${w.t.finished}`);
    const head = w.f.app.engine.head().position;
    const s = revoke(w, 'TASK_KEY', `task:${w.t.idle}`);
    const events = readAll(w.f.app.engine.db, { after: head });
    assert.deepEqual(
      events.map((e) => e.type),
      ['SecretRevoked', 'MessagePosted'],
    );
    assert.equal(new Set(events.map((e) => e.meta.commandId)).size, 1, 'one command, one transaction');
    assert.equal((events[0]!.data as Body).secretId, s.secretId);
    assert.deepEqual(taskIds(await warnings(w, 'TASK_KEY')), [w.t.idle]);
    revoke(w, 'TASK_KEY', `task:${w.t.finished}`);
    assert.deepEqual(taskIds(await warnings(w, 'TASK_KEY')), [w.t.idle], 'a done task is not warned about');
  });

  it('user scope: held tasks, tasks with a pending run, and tasks whose verifier recipe was granted the name', async (t) => {
    const w = await world(t);
    set(w, 'USER_KEY', 'user:owner');
    set(w, 'OTHER_KEY', 'user:owner');
    revoke(w, 'USER_KEY', 'user:owner');
    assert.deepEqual(taskIds(await warnings(w, 'USER_KEY')), [w.t.held, w.t.checked, w.t.queued]);
    assert.match(
      (await warnings(w, 'USER_KEY')).find((m) => m.metadata!.task_id === w.t.checked)!.body,
      /task #\d+ "Checked task" \(awaiting_verification\) needed it/,
    );
    revoke(w, 'OTHER_KEY', 'user:owner');
    assert.deepEqual(
      taskIds(await warnings(w, 'OTHER_KEY')),
      [w.t.held, w.t.queued],
      'not granted to the recipe: the verifier never had it',
    );
  });

  it('replacing a secret warns nobody; revoking over MCP and from the CLI warns as the action does', async (t) => {
    const w = await world(t);
    set(w, 'WORKER_KEY', 'agent:worker');
    set(w, 'WORKER_KEY', 'agent:worker');
    assert.deepEqual(await warnings(w, 'WORKER_KEY'), [], 'a replaced secret still reaches its tasks');
    const ask = await ok(w.owner, 'revoke_secret', { name: 'WORKER_KEY', scope: 'agent:worker' });
    await ok(w.owner, 'revoke_secret', {
      name: 'WORKER_KEY',
      scope: 'agent:worker',
      confirmation_token: ask.confirm_token,
    });
    assert.deepEqual(taskIds(await warnings(w, 'WORKER_KEY')), [w.t.held]);
    set(w, 'CLI_KEY', `task:${w.t.held}`);
    const r = colony(['secrets', 'revoke', 'CLI_KEY', '--scope', `task:${w.t.held}`, '--data', w.f.dataDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(taskIds(await warnings(w, 'CLI_KEY')), [w.t.held]);
    const again = colony(['secrets', 'revoke', 'CLI_KEY', '--scope', `task:${w.t.held}`, '--data', w.f.dataDir]);
    assert.equal(again.code, 1);
    assert.equal((await warnings(w, 'CLI_KEY')).length, 1, 'a refused revoke posts nothing');
  });

  it("a project task (no goal) is warned about in its project's channel", async (t) => {
    const w = await world(t);
    const worker = await w.f.connect(w.f.agentToken);
    const dir = join(w.f.app.dataDir, 'workspace', 'site');
    mkdirSync(dir, { recursive: true });
    await okText(w.owner, 'project_create', { name: 'Site', path: dir, description: 'The web site' });
    const id = Number(
      /Created task `(\d+)`/.exec(
        await okText(w.owner, 'task_create', { title: 'Fix the footer', project: 'Site', description: 'It overlaps.' }),
      )![1],
    );
    await okText(w.owner, 'task_dispatch', { task_id: String(id) });
    await ok(worker, 'claim_task', { task_id: id });
    set(w, 'WORKER_KEY', 'agent:worker');
    revoke(w, 'WORKER_KEY', 'agent:worker');
    assert.deepEqual(taskIds(await warnings(w, 'WORKER_KEY')), [w.t.held], 'the goal channel gets its own task only');
    const project = (await ok(w.owner, 'get_channel_messages', { channel_name: 'project-site', limit: 50 }))
      .messages as Msg[];
    const warned = project.filter((m) => m.metadata?.event === 'SecretRevoked');
    assert.deepEqual(
      warned.map((m) => [m.metadata!.task_id, m.metadata!.goal_id]),
      [[id, null]],
    );
    assert.match(warned[0]!.body, new RegExp(`task #${id} "Fix the footer" \\(claimed\\) needed it`));
  });
});
