import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildSecretEnv } from '../../src/actions/secrets/env.js';
import { revokeSecret, setSecret } from '../../src/actions/secrets.js';
import { createOwner } from '../../src/actions/principals.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { approvedTask } from '../helpers/calls.js';

/**
 * `GET /api/secrets/:scope_type/:scope_id` over a real socket: names,
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
  taskId = (await approvedTask(await f.connect(f.ownerToken))).taskId;
  const other = createOwner(f.app, 'other-owner', { actor: 'system' });
  foreignTaskId = (await approvedTask(await f.connect(other.token))).taskId;
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
