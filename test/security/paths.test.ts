import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setAgentProject } from '../../src/actions/runs/agent-controls.js';
import { listRuns } from '../../src/projections/run-queries.js';
import { callTool, textOf } from '../helpers/mcp.js';
import { runtimeFixture } from '../helpers/runtime.js';

/**
 * Over real HTTP: a project directory swapped for a symlink to a directory outside the
 * allowed roots. The swapped path stops being a root at once, and every later use of a path under it
 * — a new project, a verifier's directory, a recipe, scaffolding, an agent run in it — is refused
 * and reported (system_health), never trusted; no file appears outside the roots.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;

async function call(
  client: Client,
  name: string,
  args: Body = {},
): Promise<{ isError: boolean; text: string; body: Body }> {
  const { result, body } = await callTool(client, name, args);
  return { isError: result.isError === true, text: textOf(result), body };
}

describe('a registered path is re-resolved and re-checked on every use', () => {
  it('swapping a project directory for a symlink carries no root outside, and is reported', async (t) => {
    const f = await runtimeFixture({
      agentTools: ['project_create', 'project_scaffold', 'propose_task_tree', 'create_goal', 'system_health'],
    });
    const outside = mkdtempSync(join(tmpdir(), 'colony-outside-'));
    t.after(async () => {
      await f.close();
      rmSync(outside, { recursive: true, force: true });
    });
    const owner = await f.connect(f.ownerToken);
    const agent = await f.connect(f.agentToken);
    const swapme = join(f.app.dataDir, 'workspace', 'projects', 'swapme');
    mkdirSync(join(f.app.dataDir, 'workspace', 'projects'), { recursive: true });
    assert.equal((await call(agent, 'project_create', { name: 'swapme', path: swapme })).isError, false);

    renameSync(swapme, `${swapme}.orig`);
    symlinkSync(outside, swapme);
    const refusals: [Client, string, Body, string][] = [
      [agent, 'project_create', { name: 'evil', path: join(outside, 'x') }, 'ErrPathOutsideRoots'],
      [agent, 'project_create', { name: 'evil2', path: join(swapme, 'x') }, 'ErrPathOutsideRoots'],
      [owner, 'add_verifier', { name: 'outside', command: 'true', cwd: join(outside) }, 'ErrPathOutsideRoots'],
    ];
    for (const [client, tool, args, code] of refusals) {
      const head = f.app.engine.head().position;
      const r = await call(client, tool, args);
      assert.ok(r.isError && r.text.startsWith(`${code}: `), `${tool}: ${r.text}`);
      assert.equal(f.app.engine.head().position, head, `${tool} wrote nothing`);
    }
    await call(owner, 'add_verifier', { name: 'check', command: 'true' });
    const g = await call(owner, 'create_goal', {
      title: 'Swap goal',
      description: 'A goal with a check in the swapped dir.',
    });
    const tree = {
      title: 'Checked',
      description: 'Checked in the project.',
      verifier_config: { kind: 'command', recipe: 'check', cwd: join(swapme, 'sub') },
    };
    assert.match(
      (await call(owner, 'propose_task_tree', { goal_id: g.body.goal_id, tree })).text,
      /^ErrPathOutsideRoots: /,
    );
    assert.match((await call(agent, 'project_scaffold', { name: 'swapme' })).text, /now resolves to/);
    assert.ok(
      !existsSync(join(outside, 'x')) && !existsSync(join(outside, 'CLAUDE.md')),
      'nothing was written outside the roots',
    );

    const health = await call(agent, 'system_health');
    assert.deepEqual(health.body.moved_paths, [{ path: swapme, resolves_to: outside }]);
    assert.match(health.text, /MOVED: `.*swapme` now resolves to/);

    // An agent placed in the project is not started in the symlink's target: its run fails with the reason.
    const runner = f.addRunner('builder', 'pwd > where.txt');
    setAgentProject(f.app, f.ownerId, runner.agentId, 'swapme', 'owner', { actor: 'user:owner' });
    await f.reactor.whenDone(f.reactor.wake({ agentId: runner.agentId, source: 'manual', by: 'user-1' }).run.runId);
    const [run] = listRuns(f.app.engine.db, { agentId: runner.agentId, limit: 1 });
    assert.equal(run?.status, 'failed');
    assert.match(run?.reason ?? '', /now resolves to/);
    assert.ok(!existsSync(join(outside, 'where.txt')));

    // Swapped back, the path is itself again and usable.
    rmSync(swapme);
    renameSync(`${swapme}.orig`, swapme);
    mkdirSync(join(swapme, 'sub'));
    assert.equal((await call(owner, 'propose_task_tree', { goal_id: g.body.goal_id, tree })).isError, false);
  });
});
