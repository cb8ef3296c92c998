import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setAgentProject } from '../../../src/actions/runs/agent-controls.js';
import { createProjectTask } from '../../../src/actions/projects/tasks.js';
import { callTool, mcpFixture, type McpFixture } from '../../helpers/mcp.js';
import { okText } from '../../helpers/calls.js';

/**
 * project_get's stats and system_health's task counts once agents and tasks belong to projects: agents
 * through `agent_runtime.project_id` (AgentProjectSet), tasks through `tasks.project_id` — a project task
 * has no goal, so system_health counts it by its owner.
 */
delete process.env.COLONY_ALLOWED_ROOTS;

let f: McpFixture;
let agent: Client;
before(async () => {
  f = await mcpFixture();
  agent = await f.connect(f.agentToken);
});
after(() => f.close());

describe('project stats', () => {
  it("counts the project's agents, sessions and tasks by xylocopa status", async () => {
    await okText(agent, 'project_create', { name: 'stats' });
    await okText(agent, 'project_create', { name: 'other' });
    const by = { key: `user-${f.owner.userId}`, name: f.owner.name, tenant: f.owner.userId };
    setAgentProject(f.app, f.owner.userId, f.agent.agentId, 'stats', f.owner.name, { actor: 'user:owner' });
    for (const title of ['First task', 'Second task']) {
      createProjectTask(
        f.app,
        by,
        { title, project: 'stats', description: '', model: '', effort: '', priority: 0, cwd: null },
        { actor: 'user:owner' },
      );
    }
    createProjectTask(
      f.app,
      by,
      { title: 'Elsewhere', project: 'other', description: '', model: '', effort: '', priority: 0, cwd: null },
      { actor: 'user:owner' },
    );
    const got = await okText(agent, 'project_get', { name: 'stats' });
    assert.ok(got.endsWith('## Stats\n- agents: 1 total, 0 active\n- sessions: 0\n- tasks: INBOX=2'), got);
    const { body } = await callTool(agent, 'project_get', { name: 'other' });
    assert.deepEqual(body.stats, {
      agents: 0,
      active_agents: 0,
      sessions: 0,
      tasks: { INBOX: 1 },
      task_statuses: { proposed: 1 },
    });
    assert.ok((await okText(agent, 'system_health')).includes('- tasks: 3 (all-time) (proposed=3)'));
  });
});
