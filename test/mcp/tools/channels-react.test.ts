import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { httpFixture, type HttpFixture } from '../../helpers/mcp-http.js';
import { textOf } from '../../helpers/mcp.js';

/**
 * The owner's approve / reject reaction on a proposal in #approvals answers what the decision did —
 * the tasks or the agent it created and every command line it lets run, as `colony approve` prints
 * it — over a real MCP client on a real socket. Any other reaction still answers the bare toggle.
 */
type Body = Record<string, unknown>;
let f: HttpFixture;
let owner: Client;
let worker: Client;
const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
const LINT = 'npm run lint -- --max-warnings 0';

async function call(client: Client, name: string, args: Body): Promise<{ text: string; body: Body }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.ok(!r.isError, `${name}: ${textOf(r)}`);
  return { text: textOf(r), body: r.structuredContent as Body };
}
const react = (messageId: unknown, reaction: string, metadata?: string) =>
  call(owner, 'react', { message_id: messageId, reaction, ...(metadata ? { metadata } : {}) });

before(async () => {
  f = await httpFixture({ agentTools: ['propose_agent', 'whoami'] });
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
  await call(owner, 'add_verifier', { name: 'lint', command: LINT });
});
after(() => f.close());

describe("the owner's decision by reaction", () => {
  let goalId: number;

  it('approve answers with the tasks created and every command line the tree runs', async () => {
    goalId = (await call(owner, 'create_goal', { title: 'Ship the release notes', description: DESCRIPTION })).body
      .goal_id as number;
    const tree = {
      title: 'Write the notes',
      description: 'One section per change.',
      children: [
        {
          title: 'Lint the notes',
          description: 'The linter passes on the notes.',
          verifier_config: { kind: 'command', recipe: 'lint' },
        },
      ],
    };
    const p = (await call(owner, 'propose_task_tree', { goal_id: goalId, tree })).body;
    const { text, body } = await react(p.proposal_message_id, 'approve');
    const decision = body.decision as {
      proposal_id: number;
      status: string;
      task_ids: number[];
      commands: string[];
      summary: string;
    };
    assert.deepEqual([decision.proposal_id, decision.status, decision.task_ids.length], [p.proposal_id, 'approved', 2]);
    const line = `recipe "lint": sh -c ${JSON.stringify(LINT)} in the task's project, else the assignee's working directory (read-only), timeout 60s`;
    assert.deepEqual(decision.commands, [line]);
    assert.equal(
      text,
      `Approved proposal ${p.proposal_id}: created tasks ${decision.task_ids.join(', ')}\nCommands it runs on this host (your verifier recipes):\n  ${line}`,
    );
    assert.equal(decision.summary, text);
    assert.equal(body.action, 'added');
  });

  it('reject answers that the proposer was told why', async () => {
    const g = (await call(owner, 'create_goal', { title: 'Audit the API docs', description: DESCRIPTION })).body;
    const p = (
      await call(owner, 'propose_task_tree', {
        goal_id: g.goal_id,
        tree: { title: 'Audit it all', description: 'Every endpoint at once.' },
      })
    ).body;
    const { text, body } = await react(p.proposal_message_id, 'reject', '{"reason":"Split it per endpoint"}');
    assert.equal(text, `Rejected proposal ${p.proposal_id}; the proposer was told why`);
    assert.deepEqual([(body.decision as Body).status, (body.decision as Body).commands], ['rejected', []]);
  });

  it('approving an agent proposal names the agent it created', async () => {
    const [task] = (await call(owner, 'get_goal', { goal_id: goalId })).body.tasks_tree as { id: number }[];
    const p = (
      await call(worker, 'propose_agent', {
        goal_id: goalId,
        parent_task_id: task!.id,
        name: 'notes-writer',
        model: 'test-model',
        system_prompt: 'You write release notes, briefly and precisely.',
        tool_scope: ['whoami'],
        autonomy_tier: 'supervised',
        reason: 'The notes need a writer.',
      })
    ).body;
    const { text, body } = await react(p.approval_message_id, 'approve');
    const agentId = (body.decision as Body).agent_id as number;
    assert.ok(Number.isInteger(agentId));
    assert.equal(text, `Approved proposal ${p.proposal_id}: created agent notes-writer (id ${agentId})`);
  });

  it('any other reaction answers the bare toggle', async () => {
    const msg = (
      await call(owner, 'send_message', { channel: 'goal-ship-the-release-notes', body: 'Release on Friday.' })
    ).body;
    const { text, body } = await react(msg.message_id, 'done');
    assert.equal(body.decision, undefined);
    assert.deepEqual(JSON.parse(text), body);
  });
});
