import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { createGoal } from '../../src/actions/goals.js';
import { registerAgent } from '../../src/actions/principals.js';
import { decideProposal, proposeTaskTree } from '../../src/actions/proposals.js';
import { claimTask, completeTask } from '../../src/actions/tasks.js';
import { openApp } from '../../src/app.js';
import { getTask } from '../../src/projections/task-queries.js';
import { colony, colonyFails, colonyOk } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * "Done only with evidence" from the command line, as separate processes on a real data dir: `colony goals
 * evidence ID [on|off] [--max-rejections N]` shows and sets the owner's rule, and `colony tasks verify ID
 * --approve|--reject --reason TEXT` is the owner's verdict on a hand-in — a rejection goes back to the
 * assignee within the goal's limit. Wrong input is refused with one line and nothing written.
 */
const scratch = tempDir('colony-cli-evidence-');
after(() => scratch.cleanup());

describe('colony goals evidence and colony tasks verify', () => {
  let dir: string;
  let goalId: number;
  let taskId: number;

  before(() => {
    dir = join(scratch.dir, 'data');
    assert.equal(colony(['init', '--data', dir]).code, 0);
    const app = openApp({ dataDir: dir });
    try {
      const owner = { key: 'user-1', name: 'owner', tenant: 1 };
      const actor = { actor: 'user:owner' };
      goalId = createGoal(
        app,
        owner,
        {
          title: 'Tidy the docs',
          description: 'Every page of the docs is tidy.',
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 1,
          coordinatorConfig: 'default',
          approvalMode: 'human',
        },
        actor,
      ).goalId;
      const p = proposeTaskTree(app, owner, goalId, 'One step.', { title: 'Tidy', description: 'Tidy it.' }, actor);
      taskId = decideProposal(app, owner, p.proposalId, 'approve', '', actor).taskIds[0]!;
      const w = registerAgent(
        app,
        {
          name: 'tidier',
          ownerId: 1,
          model: 'test-model',
          systemPrompt: 'You tidy.',
          toolScope: ['claim_task', 'complete_task'],
          tier: 'supervised',
          command: null,
          parentId: null,
          spawnDepth: 0,
        },
        actor,
      );
      const tidier = { key: `agent-${w.agentId}`, name: 'tidier', tenant: 1 };
      claimTask(app, tidier, taskId, { actor: 'agent:tidier' });
      completeTask(app, tidier, taskId, 'tidied', [], { actor: 'agent:tidier' });
    } finally {
      app.engine.close();
    }
  });

  it('shows the rule of a new goal: on, two rejections sent back', () => {
    assert.equal(
      colonyOk(['goals', 'evidence', String(goalId), '--data', dir]),
      `Goal ${goalId}: done only with evidence on; rejected hand-ins go back to the assignee up to 2 times\n`,
    );
  });

  it('the owner rejects with a reason (back to the assignee), then approves the hand-in', () => {
    colonyFails(dir, ['tasks', 'verify', String(taskId)], /give exactly one of --approve or --reject/);
    colonyFails(dir, ['tasks', 'verify', String(taskId), '--approve', '--reject'], /exactly one/);
    colonyFails(dir, ['tasks', 'verify', String(taskId), '--reject'], /--reject needs --reason/);
    colonyFails(dir, ['tasks', 'verify', 'x', '--approve'], /task id must be a positive integer/);
    colonyFails(dir, ['tasks', 'verify', '999', '--approve'], /not found/);
    const out = colonyOk([
      'tasks',
      'verify',
      String(taskId),
      '--reject',
      '--reason',
      'Page 3 is untidy',
      '--data',
      dir,
    ]);
    assert.equal(out, `Task ${taskId} "Tidy": reject → claimed — back to tidier with your reason\n`);
    colonyFails(dir, ['tasks', 'verify', String(taskId), '--approve'], /not awaiting verification|awaiting/);
    const app = openApp({ dataDir: dir });
    try {
      const tidier = { key: `agent-${getTask(app.engine.db, taskId)!.assigneeAgentId}`, name: 'tidier', tenant: 1 };
      completeTask(app, tidier, taskId, 'page 3 tidied', [], { actor: 'agent:tidier' });
    } finally {
      app.engine.close();
    }
    const json = JSON.parse(colonyOk(['tasks', 'verify', String(taskId), '--approve', '--json', '--data', dir]));
    assert.deepEqual(json, { task_id: taskId, status: 'done', verdict: 'approve', rejections: 1 });
  });

  it('sets the rule; wrong input is refused with one line', () => {
    colonyFails(dir, ['goals', 'evidence', String(goalId), 'maybe'], /rule must be on or off, not "maybe"/);
    colonyFails(dir, ['goals', 'evidence', String(goalId), '--max-rejections', '11'], /from 0 to 10/);
    colonyFails(dir, ['goals', 'evidence', '0'], /goal id must be a positive integer/);
    const set = colonyOk([
      'goals',
      'evidence',
      String(goalId),
      'off',
      '--max-rejections',
      '0',
      '--json',
      '--data',
      dir,
    ]);
    assert.deepEqual(JSON.parse(set), { goal_id: goalId, require_evidence: false, max_rejections: 0 });
  });
});
