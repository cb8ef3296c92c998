import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildSecretEnv } from '../../src/actions/secrets/env.js';
import { revokeSecret, setSecret } from '../../src/actions/secrets.js';
import { createOwner } from '../../src/actions/principals.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * `GET /api/secrets/:scope_type/:scope_id` over a real socket (reference §7.1 REST): names,
 * availability and last use — never values — for a scope of the caller's tenant; owner tokens only.
 */
type Body = Record<string, unknown>;
const VALUE = 'rest-secret-value-42';
let f: HttpFixture;
let taskId: number;
let foreignTaskId: number;
const by = () => ({ key: 'user-1', name: 'owner', tenant: 1 });
const set = (name: string, scope: string) =>
  setSecret(f.app, by(), { name, value: VALUE, scope }, { actor: 'user:owner' });

async function ok(client: Client, name: string, args: Body): Promise<Body> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
  return r.structuredContent as Body;
}

async function taskOf(owner: Client): Promise<number> {
  const g = await ok(owner, 'create_goal', {
    title: 'Weekly report',
    description: 'Send the weekly report to the team.',
  });
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: { title: 'Send the report', description: 'Send it through Brevo.' },
  });
  await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
  return ((await ok(owner, 'get_goal', { goal_id: g.goal_id })).tasks_tree as { id: number }[])[0]!.id;
}

const get = (path: string, token: string | null = f.ownerToken) =>
  fetch(`${f.base}/api${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });

async function apiError(path: string, status: number, code?: string): Promise<void> {
  const before = f.eventCount();
  const res = await get(path);
  assert.equal(res.status, status, path);
  if (code) assert.equal(((await res.json()) as { error: { code: string } }).error.code, code, path);
  assert.equal(f.eventCount(), before);
}

before(async () => {
  f = await httpFixture();
  taskId = await taskOf(await f.connect(f.ownerToken));
  const other = createOwner(f.app, 'other-owner', { actor: 'system' });
  foreignTaskId = await taskOf(await f.connect(other.token));
});
after(() => f.close());

describe('GET /api/secrets/:scope_type/:scope_id', () => {
  it('lists one row per name of the scope: availability and last use, never the value', async () => {
    set('b_key', 'agent:worker');
    set('A_KEY', 'agent:worker');
    set('A_KEY', 'agent:worker');
    set('OTHER', 'user:owner');
    buildSecretEnv(f.app, { ownerId: 1, agentId: f.agentId });
    revokeSecret(f.app, by(), { name: 'B_KEY', scope: 'agent:worker' }, { actor: 'user:owner' });
    for (const path of ['/secrets/agent/worker', `/secrets/agent/${f.agentId}`]) {
      const res = await get(path);
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.ok(!text.includes(VALUE));
      const rows = JSON.parse(text) as Body[];
      assert.deepEqual(
        rows.map((r) => Object.keys(r).sort()),
        [
          ['available', 'last_used_at', 'name'],
          ['available', 'last_used_at', 'name'],
        ],
      );
      assert.deepEqual(
        rows.map((r) => [r.name, r.available, typeof r.last_used_at]),
        [
          ['A_KEY', true, 'string'],
          ['B_KEY', false, 'string'],
        ],
      );
    }
    assert.deepEqual(
      ((await (await get('/secrets/user/owner')).json()) as Body[]).map((r) => r.name),
      ['OTHER'],
    );
    assert.deepEqual(await (await get(`/secrets/task/${taskId}`)).json(), []);
  });

  it("refuses other principals, bad scopes and other tenants' scopes", async () => {
    assert.equal((await get('/secrets/agent/worker', null)).status, 401);
    assert.equal((await get('/secrets/agent/worker', f.agentToken)).status, 403);
    await apiError('/secrets/team/worker', 400, 'ErrInvalidScope');
    await apiError('/secrets/task/abc', 400, 'ErrInvalidScope');
    await apiError('/secrets/agent/nobody', 404, 'ErrNotFound');
    await apiError('/secrets/user/other-owner', 404, 'ErrNotFound');
    await apiError(`/secrets/task/${foreignTaskId}`, 404, 'ErrTaskNotFound');
  });
});
