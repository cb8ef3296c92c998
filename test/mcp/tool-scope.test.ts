import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { COORDINATOR_TOOLS } from '../../src/actions/coordinator.js';
import { checkToolScope } from '../../src/commands/tool-scope.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { answer, ok, refused } from '../helpers/calls.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';

/**
 * Tool scope from the agent's side, through a real MCP Client: tools/list shows an agent exactly its scope (the
 * owner every tool), the capability catalog agrees, a call outside the scope names the owner's fix, and
 * the owner's update_agent refuses a scope naming a tool that does not exist or only owners call.
 */
const SCOPE = ['get_agent_capability', 'list_agent_capabilities', 'my_status', 'whoami'];
let f: McpFixture;
let owner: Client;
let worker: Client;

before(async () => {
  f = await mcpFixture({ agent: { name: 'worker', toolScope: SCOPE } });
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
});
after(() => f.close());

const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);

describe('tools/list by scope', () => {
  it('an agent sees exactly the agent tools in its scope; the owner sees every tool, owner tools too', async () => {
    assert.deepEqual(await names(worker), SCOPE);
    const all = await names(owner);
    assert.equal(all.length, buildToolRegistry().list().length);
    for (const t of ['update_agent', 'list_tokens', 'claim_task', 'whoami']) assert.ok(all.includes(t), t);
  });

  it('the capability catalog lists the same tools as tools/list', async () => {
    const page = await ok(worker, 'list_agent_capabilities', { kind: 'tool', limit: 100 });
    assert.deepEqual((page.capabilities as { name: string }[]).map((c) => c.name).sort(), SCOPE);
    const miss = (await answer(worker, 'get_agent_capability', { capability_id: 'tool:claim_task' })).body;
    assert.equal(miss.error_code, 'CAPABILITY_NOT_FOUND', 'a tool outside the scope is not described as callable');
  });

  it('a scope the owner widens shows at the next tools/list of the same session', async () => {
    const agent = f.addAgent('widened', { toolScope: ['whoami'] });
    const c = await f.connect(agent.token);
    assert.deepEqual(await names(c), ['whoami']);
    await ok(owner, 'update_agent', { agent_id: agent.agentId, tool_scope: ['whoami', 'read_inbox'] });
    assert.deepEqual(await names(c), ['read_inbox', 'whoami']);
  });
});

describe('a call outside the scope', () => {
  it("names the fix: the owner's `colony agents update … --tools <current>,<tool>`", async () => {
    const text = await refused(f, worker, 'claim_task', { task_id: 1 }, 'ErrToolNotInScope');
    assert.equal(
      text,
      'ErrToolNotInScope: claim_task is not in the tool scope of agent worker; the owner can add it: ' +
        'colony agents update worker --tools get_agent_capability,list_agent_capabilities,my_status,whoami,claim_task',
    );
    const r = await worker.callTool({ name: 'claim_task', arguments: { task_id: 1 } });
    const details = (r.structuredContent as { error: { details: Record<string, unknown> } }).error.details;
    assert.deepEqual(details, {
      tool: 'claim_task',
      tool_scope: SCOPE,
      fix: 'colony agents update worker --tools get_agent_capability,list_agent_capabilities,my_status,whoami,claim_task',
    });
  });

  it('an owner tool stays unknown to an agent (ErrToolNotFound): there is nothing the owner could add', async () => {
    const text = await refused(f, worker, 'list_tokens', {}, 'ErrToolNotFound');
    assert.equal(text, 'ErrToolNotFound: no tool named list_tokens');
  });
});

describe('update_agent checks the tool scope (ErrInvalidInput, nothing written)', () => {
  it('a typo is named with the closest agent tool', async () => {
    const text = await refused(
      f,
      owner,
      'update_agent',
      { agent_id: f.agent.agentId, tool_scope: ['whoami', 'claim_tsk'] },
      'ErrInvalidInput',
    );
    assert.equal(text, 'ErrInvalidInput: unknown tool claim_tsk: did you mean claim_task?');
  });

  it('an owner tool is refused as not callable by agents; every problem is on the one line', async () => {
    const text = await refused(
      f,
      owner,
      'update_agent',
      { agent_id: f.agent.agentId, tool_scope: ['list_tokens', 'whoami', 'zzz'] },
      'ErrInvalidInput',
    );
    assert.equal(text, 'ErrInvalidInput: unknown tool zzz; list_tokens is an owner tool: agents cannot call it');
    assert.deepEqual(getAgent(f.app.engine.db, f.agent.agentId)!.toolScope, SCOPE, 'the scope is unchanged');
  });

  it('a valid scope is accepted', async () => {
    await ok(owner, 'update_agent', { agent_id: f.agent.agentId, tool_scope: [...SCOPE, 'claim_task'] });
    assert.deepEqual(await names(worker), ['claim_task', ...SCOPE]);
  });
});

describe("Colony's own scopes", () => {
  it("the default coordinator's tools are all agent tools that exist", () => {
    assert.doesNotThrow(() => checkToolScope(COORDINATOR_TOOLS, buildToolRegistry().known()));
  });
});
