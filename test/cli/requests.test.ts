import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getResourceRequest } from '../../src/projections/resources.js';
import { colonyFails, colonyOk } from '../helpers/cli.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';
import { ok, approvedTask } from '../helpers/calls.js';

/**
 * `colony requests list|refuse` as separate processes on the data dir of a live in-process Colony (issue
 * 15 "no dead ends"): an agent's request_resource over MCP shows up in the owner's list; refusing it
 * records the reason, makes it `rejected` and DMs the requester; anything wrong is one line on stderr,
 * exit 1, nothing appended. Agent-written reasons are printed escaped, on one line.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;
type Msg = { body: string; from: string; metadata: Body | null };

interface World {
  f: McpFixture;
  worker: Client;
  taskId: number;
}

async function world(t: TestContext): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const { taskId } = await approvedTask(await f.connect(f.ownerToken));
  return { f, worker: await f.connect(f.agentToken), taskId };
}

const request = (w: World, name: string, reason = 'send the weekly report') =>
  ok(w.worker, 'request_resource', { name, resource_type: 'api_key', reason, task_id: w.taskId }) as Promise<{
    request_id: number;
  }>;
const passes = (w: World, args: string[]): string => colonyOk([...args, '--data', w.f.dataDir]);
const json = (w: World, args: string[]) => JSON.parse(passes(w, [...args, '--json'])) as unknown;

describe('colony requests', () => {
  it('list shows pending requests (newest first); refuse records the reason, rejects it and DMs the requester', async (t) => {
    const w = await world(t);
    const first = await request(w, 'BREVO_API_KEY');
    const second = await request(w, 'SLACK_TOKEN', 'post the summary to Slack');
    assert.equal(passes(w, ['requests', 'list', '--status', 'rejected']), 'No rejected resource requests\n');
    const text = passes(w, ['requests', 'list']).trimEnd().split('\n');
    assert.equal(text.length, 2);
    assert.match(
      text[0]!,
      new RegExp(
        `^#${second.request_id}  pending  SLACK_TOKEN \\(api_key\\)  task #${w.taskId}  from worker  \\S+  — post the summary to Slack$`,
      ),
    );
    assert.match(text[1]!, new RegExp(`^#${first.request_id}  pending  BREVO_API_KEY`));
    const listed = json(w, ['requests', 'list']) as Body[];
    assert.deepEqual(
      listed.map((r) => [r.id, r.status, r.name, r.task_id, r.requester, r.reason]),
      [
        [second.request_id, 'pending', 'SLACK_TOKEN', w.taskId, 'worker', 'post the summary to Slack'],
        [first.request_id, 'pending', 'BREVO_API_KEY', w.taskId, 'worker', 'send the weekly report'],
      ],
    );

    const refused = json(w, [
      'requests',
      'refuse',
      String(first.request_id),
      '--reason',
      '  We do not use Brevo any more: export a CSV instead.  ',
    ]);
    assert.deepEqual(refused, {
      request_id: first.request_id,
      status: 'rejected',
      name: 'BREVO_API_KEY',
      task_id: w.taskId,
      requester: 'worker',
      reason: 'We do not use Brevo any more: export a CSV instead.',
    });
    assert.equal(getResourceRequest(w.f.app.engine.db, first.request_id)!.status, 'rejected');
    const dms = (await ok(w.worker, 'read_inbox', { include_read: true })).messages as Msg[];
    assert.equal(dms.length, 1);
    assert.match(
      dms[0]!.body,
      new RegExp(
        `request #${first.request_id} \\(BREVO_API_KEY for task #${w.taskId}\\) was rejected by owner: We do not use Brevo any more`,
      ),
    );
    assert.deepEqual(
      [dms[0]!.from, dms[0]!.metadata?.event, dms[0]!.metadata?.request_id],
      ['system', 'ResourceRequestRejected', first.request_id],
    );

    const human = passes(w, ['requests', 'refuse', String(second.request_id), '--reason', 'Not this quarter.']);
    assert.equal(
      human,
      `Refused resource request #${second.request_id} (SLACK_TOKEN for task #${w.taskId} from worker); worker was told by DM: Not this quarter.\n`,
    );
    assert.equal(passes(w, ['requests', 'list']), 'No pending resource requests\n');
    const rejected = json(w, ['requests', 'list', '--status', 'rejected']) as Body[];
    assert.deepEqual(
      rejected.map((r) => [r.id, r.rejection_reason]),
      [
        [second.request_id, 'Not this quarter.'],
        [first.request_id, 'We do not use Brevo any more: export a CSV instead.'],
      ],
    );
    assert.ok(rejected.every((r) => typeof r.rejected_at === 'string'));
    assert.match(
      passes(w, ['requests', 'list', '--status', 'rejected', '--limit', '1']),
      new RegExp(`^#${second.request_id}  rejected  .*  refused \\S+: Not this quarter\\.\\n$`),
    );
  });

  it('refusing a request that is no longer pending is a clear error that writes nothing', async (t) => {
    const w = await world(t);
    const r = await request(w, 'BREVO_API_KEY');
    passes(w, ['requests', 'refuse', String(r.request_id), '--reason', 'no']);
    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', String(r.request_id), '--reason', 'again'],
      new RegExp(`^colony: ErrRequestNotPending: resource request ${r.request_id} is rejected, not pending$`),
    );
    const done = await request(w, 'TEAM_KEY');
    passes(w, ['secrets', 'set', 'TEAM_KEY', 'value-1', '--scope', 'user:owner']);
    assert.deepEqual(
      (json(w, ['requests', 'list', '--status', 'fulfilled']) as Body[]).map((x) => [x.id, x.fulfilled_scope]),
      [[done.request_id, 'user:owner']],
    );
    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', String(done.request_id), '--reason', 'too late'],
      /ErrRequestNotPending: resource request \d+ is fulfilled, not pending$/,
    );
  });

  it('bad input, unknown and foreign requests: one line on stderr, exit 1, nothing appended', async (t) => {
    const w = await world(t);
    const mine = await request(w, 'BREVO_API_KEY');
    const other = w.f.addOwner('other-owner');
    const stranger = await w.f.connect(w.f.addAgent('outsider', { ownerId: other.userId }).token);
    const og = await ok(await w.f.connect(other.token), 'create_goal', {
      title: 'Other goal',
      description: 'Another team entirely.',
    });
    const op = await ok(await w.f.connect(other.token), 'propose_task_tree', {
      goal_id: og.goal_id,
      tree: { title: 'Their task', description: 'Theirs alone.' },
    });
    await ok(await w.f.connect(other.token), 'react', { message_id: op.proposal_message_id, reaction: 'approve' });
    const otherTask = (
      (await ok(await w.f.connect(other.token), 'get_goal', { goal_id: og.goal_id })).tasks_tree as { id: number }[]
    )[0]!.id;
    const foreign = await ok(stranger, 'request_resource', {
      name: 'THEIR_KEY',
      resource_type: 'url',
      reason: 'their own need',
      task_id: otherTask,
    });

    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', 'abc', '--reason', 'no'],
      /^colony: request id must be a positive integer, not "abc"$/,
    );
    colonyFails(w.f.dataDir, ['requests', 'refuse', '0', '--reason', 'no'], /positive integer/);
    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', String(mine.request_id)],
      /required option '--reason <text>' not specified/,
    );
    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', String(mine.request_id), '--reason', '   '],
      /--reason must be 1–2000 characters/,
    );
    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', String(mine.request_id), '--reason', 'x'.repeat(2001)],
      /--reason must be 1–2000 characters/,
    );
    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', '999', '--reason', 'no'],
      /^colony: ErrNotFound: resource request 999 not found$/,
    );
    colonyFails(
      w.f.dataDir,
      ['requests', 'refuse', String(foreign.request_id), '--reason', 'no'],
      /ErrNotFound: resource request \d+ not found$/,
    );
    colonyFails(
      w.f.dataDir,
      ['requests', 'list', '--status', 'open'],
      /^colony: --status must be one of pending, fulfilled, rejected, revoked, not "open"$/,
    );
    colonyFails(w.f.dataDir, ['requests', 'list', '--limit', '0'], /--limit must be a whole number from 1 to 1000/);
    colonyFails(w.f.dataDir, ['requests', 'list', '--limit', 'many'], /--limit must be a whole number/);
    assert.deepEqual(
      (json(w, ['requests', 'list']) as Body[]).map((r) => r.id),
      [mine.request_id],
      "another tenant's request is never listed",
    );
    assert.equal(getResourceRequest(w.f.app.engine.db, mine.request_id)!.status, 'pending');
    for (const args of [
      ['requests', '--help'],
      ['requests', 'list', '--help'],
      ['requests', 'refuse', '--help'],
    ])
      assert.match(passes(w, args), /Usage: colony requests/);
  });

  it("prints an agent's hostile reason escaped, on one line", async (t) => {
    const w = await world(t);
    const r = await request(w, 'BREVO_API_KEY', 'need it\n#99  pending  FAKE \x1b[2J\u202eevil');
    const out = passes(w, ['requests', 'list']);
    assert.equal(out.trimEnd().split('\n').length, 1, out);
    assert.ok(!out.includes('\x1b') && !out.includes('\u202e'));
    assert.match(
      out,
      new RegExp(`^#${r.request_id} .*need it\\\\u000a#99  pending  FAKE \\\\u001b\\[2J\\\\u202eevil\\n$`),
    );
    assert.equal((json(w, ['requests', 'list']) as Body[])[0]!.reason, 'need it\n#99  pending  FAKE \x1b[2J\u202eevil');
  });
});
