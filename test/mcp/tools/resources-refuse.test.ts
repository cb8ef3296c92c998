import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setSecret } from '../../../src/actions/secrets.js';
import { getResourceRequest } from '../../../src/projections/resources.js';
import { ok, refused, approvedTask } from '../../helpers/calls.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';

/**
 * refuse_resource_request through a real MCP Client — no request is left without an answer: the owner refuses a
 * pending request_resource request with a reason; it becomes `rejected`, the reason is recorded and the
 * requester gets it by DM. Not pending, unknown, foreign or malformed: a clear error, nothing written.
 * Agents do not see the tool.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;
type Msg = { body: string; from: string; metadata: Body | null };

interface World {
  f: McpFixture;
  owner: Client;
  worker: Client;
  taskId: number;
}

async function world(t: TestContext): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  return { f, owner, worker: await f.connect(f.agentToken), taskId: (await approvedTask(owner)).taskId };
}

const request = async (w: World, name = 'BREVO_API_KEY', by = w.worker, taskId = w.taskId): Promise<number> =>
  (
    await ok(by, 'request_resource', {
      name,
      resource_type: 'api_key',
      reason: 'send the weekly report',
      task_id: taskId,
    })
  ).request_id as number;

describe('refuse_resource_request (owner)', () => {
  it('rejects a pending request with the reason and DMs the requester', async (t) => {
    const w = await world(t);
    const id = await request(w);
    const out = await ok(w.owner, 'refuse_resource_request', {
      request_id: id,
      reason: '  Use the CSV export instead.  ',
    });
    assert.deepEqual(out, {
      request_id: id,
      status: 'rejected',
      name: 'BREVO_API_KEY',
      task_id: w.taskId,
      requester: 'worker',
      reason: 'Use the CSV export instead.',
    });
    const row = getResourceRequest(w.f.app.engine.db, id)!;
    assert.deepEqual([row.status, row.rejectionReason], ['rejected', 'Use the CSV export instead.']);
    const dms = (await ok(w.worker, 'read_inbox', { include_read: true })).messages as Msg[];
    assert.equal(dms.length, 1);
    assert.equal(dms[0]!.from, 'system');
    assert.match(
      dms[0]!.body,
      new RegExp(
        `request #${id} \\(BREVO_API_KEY for task #${w.taskId}\\) was rejected by owner: Use the CSV export instead\\.`,
      ),
    );
    assert.deepEqual(dms[0]!.metadata, {
      kind: 'system',
      event: 'ResourceRequestRejected',
      request_id: id,
      resource_name: 'BREVO_API_KEY',
      task_id: w.taskId,
      reason: 'Use the CSV export instead.',
    });
    // The agent may ask again: a refused request is closed, a new one is a new request.
    assert.notEqual(await request(w), id);
  });

  it('a request that is not pending is ErrRequestNotPending; nothing is written', async (t) => {
    const w = await world(t);
    const id = await request(w);
    await ok(w.owner, 'refuse_resource_request', { request_id: id, reason: 'no' });
    assert.match(
      await refused(
        w.f,
        w.owner,
        'refuse_resource_request',
        { request_id: id, reason: 'again' },
        'ErrRequestNotPending',
      ),
      /is rejected, not pending/,
    );
    const fulfilled = await request(w, 'TEAM_KEY');
    setSecret(
      w.f.app,
      { key: `user-${w.f.owner.userId}`, name: 'owner', tenant: w.f.owner.userId },
      { name: 'TEAM_KEY', value: 'v', scope: 'user:owner' },
      { actor: 'user:owner' },
    );
    assert.match(
      await refused(
        w.f,
        w.owner,
        'refuse_resource_request',
        { request_id: fulfilled, reason: 'late' },
        'ErrRequestNotPending',
      ),
      /is fulfilled, not pending/,
    );
  });

  it('unknown, foreign and malformed requests are refused without writing; agents do not see the tool', async (t) => {
    const w = await world(t);
    const id = await request(w);
    const other = w.f.addOwner('other-owner');
    const otherOwner = await w.f.connect(other.token);
    const stranger = await w.f.connect(w.f.addAgent('outsider', { ownerId: other.userId }).token);
    const foreign = await request(w, 'THEIR_KEY', stranger, (await approvedTask(otherOwner)).taskId);
    await refused(w.f, w.owner, 'refuse_resource_request', { request_id: 999, reason: 'no' }, 'ErrNotFound');
    await refused(w.f, w.owner, 'refuse_resource_request', { request_id: foreign, reason: 'no' }, 'ErrNotFound');
    await refused(w.f, otherOwner, 'refuse_resource_request', { request_id: id, reason: 'no' }, 'ErrNotFound');
    for (const args of [
      { request_id: id },
      { reason: 'no' },
      { request_id: id, reason: '   ' },
      { request_id: id, reason: 'x'.repeat(2001) },
      { request_id: 0, reason: 'no' },
      { request_id: 'one', reason: 'no' },
      { request_id: id, reason: 'no', extra: 1 },
    ]) {
      await refused(w.f, w.owner, 'refuse_resource_request', args, 'ErrInvalidInput');
    }
    await refused(w.f, w.worker, 'refuse_resource_request', { request_id: id, reason: 'no' }, 'ErrToolNotFound');
    assert.ok(!(await w.worker.listTools()).tools.some((x) => x.name === 'refuse_resource_request'));
    const tool = (await w.owner.listTools()).tools.find((x) => x.name === 'refuse_resource_request')!;
    assert.deepEqual([tool.annotations?.readOnlyHint, tool.annotations?.destructiveHint], [false, false]);
    assert.equal(getResourceRequest(w.f.app.engine.db, id)!.status, 'pending');
  });
});
