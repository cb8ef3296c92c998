import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { setAgentProject } from '../../../src/actions/runs/agent-controls.js';
import { getTask } from '../../../src/projections/task-queries.js';
import { listRuns } from '../../../src/projections/run-queries.js';
import { callTool, textOf } from '../../helpers/mcp.js';
import { runtimeFixture } from '../../helpers/runtime.js';

/**
 * A project task worked by a run: task_dispatch wakes the agent of the
 * project, which claims the task; its run starts in the project's directory with the task context, and
 * a run that times out makes the task TIMEOUT — task_dispatch then brings it back as attempt 2.
 */
it('an agent of a project runs in its directory; a timed-out run times the task out; dispatch retries it', async (t) => {
  const f = await runtimeFixture();
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  const dir = join(f.app.dataDir, 'workspace', 'shop');
  mkdirSync(dir, { recursive: true });
  const say = async (name: string, args: Record<string, unknown>) => textOf((await callTool(owner, name, args)).result);
  assert.match(await say('project_create', { name: 'shop', path: dir }), /Created project/);
  const slow = f.addRunner(
    'slowpoke',
    'cat >/dev/null; touch "ran-in-$COLONY_TASK_ID"; exec sleep 20',
    { timeoutSec: 1 },
    { toolScope: ['whoami', 'claim_task', 'task_create'] },
  );
  setAgentProject(f.app, f.ownerId, slow.agentId, 'shop', 'user-1', { actor: 'user:owner' });
  const agent = await f.connect(slow.token);
  const created = textOf((await callTool(agent, 'task_create', { title: 'Restock the shelves' })).result);
  assert.match(created, /^Created task `(\d+)` in project `shop \(inferred from cwd\)` \[INBOX\]\./);
  const id = /`(\d+)`/.exec(created)![1]!;
  await say('task_dispatch', { task_id: id });
  assert.ok(!(await callTool(agent, 'claim_task', { task_id: Number(id) })).result.isError);
  await f.reactor.idle();
  // The dispatch woke the project's agent (task_dispatched); the claim's own wake-up joined that run or
  // queued behind it — and was refused once the task had timed out.
  const run = listRuns(f.app.engine.db, { agentId: slow.agentId, limit: 10 }).reverse()[0]!;
  assert.equal(run.source, 'task_dispatched');
  assert.equal(run.status, 'timed_out');
  assert.ok(existsSync(join(dir, `ran-in-${id}`)), 'the run started in the project directory with the task context');
  assert.equal(getTask(f.app.engine.db, Number(id))!.status, 'timeout');
  assert.match(await say('task_get', { task_id: id }), /- status: TIMEOUT/);
  assert.match(await say('task_dispatch', { task_id: id }), /queued for dispatch/);
  assert.match(await say('task_get', { task_id: id }), /- status: PENDING\n[\s\S]*- attempt: 2/);
});
