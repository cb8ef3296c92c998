import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callTool, mcpFixture, textOf } from '../helpers/mcp.js';

/**
 * Through a real MCP Client: input that used to end in ErrInternal (a NUL byte in a
 * search, a task tree nested ~550 deep that overflowed the validator's stack) or was accepted (a blank
 * task title) is ErrInvalidInput naming the problem, and nothing is written.
 */
type Body = Record<string, unknown>;
const nested = (depth: number): Body => {
  let node: Body = { title: `Level ${depth}`, description: 'A very deep task tree.' };
  for (let d = depth - 1; d >= 1; d -= 1)
    node = { title: `Level ${d}`, description: 'A very deep task tree.', children: [node] };
  return node;
};

describe('bad input is ErrInvalidInput, never ErrInternal, and writes nothing', () => {
  it('NUL bytes, deep nesting and blank titles', async (t) => {
    const f = await mcpFixture();
    t.after(() => f.close());
    const owner = await f.connect(f.ownerToken);
    const worker = await f.connect(f.agentToken);
    const g = await callTool(owner, 'create_goal', { title: 'Deep goal', description: 'A goal for a deep tree.' });
    await callTool(owner, 'project_create', { name: 'inputs' });
    const cases: [string, Body, RegExp][] = [
      ['search_messages', { query: 'hello\u0000world' }, /query contains a NUL character/],
      ['send_message', { to: 'owner', body: 'a\u0000b' }, /body contains a NUL character/],
      ['propose_task_tree', { goal_id: g.body.goal_id, tree: nested(550) }, /nest deeper than 100 levels/],
      ['propose_task_tree', { goal_id: g.body.goal_id, tree: nested(40) }, /at most 32 levels deep/],
    ];
    for (const [tool, args, why] of cases) {
      const head = f.app.engine.head().position;
      const { result } = await callTool(tool === 'propose_task_tree' ? owner : worker, tool, args);
      assert.equal(result.isError, true, tool);
      assert.ok(textOf(result).startsWith('ErrInvalidInput: '), `${tool}: ${textOf(result).slice(0, 200)}`);
      assert.match(textOf(result), why);
      assert.equal(f.app.engine.head().position, head, `${tool} wrote nothing`);
    }
    // xylocopa's tools answer refusals as text: the code is in structuredContent.
    for (const title of ['', '   \t ']) {
      const head = f.app.engine.head().position;
      const { result, body } = await callTool(worker, 'task_create', { title, project: 'inputs' });
      assert.deepEqual([body.status, body.error_code], ['error', 'ErrInvalidInput'], textOf(result));
      assert.match(textOf(result), /title: must not be empty/);
      assert.equal(f.app.engine.head().position, head, 'task_create wrote nothing');
    }
    assert.equal(
      (await callTool(owner, 'propose_task_tree', { goal_id: g.body.goal_id, tree: nested(32) })).result.isError,
      undefined,
      'a 32-level tree is fine',
    );
  });
});
