import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { rotateToken } from '../../src/actions/principals.js';
import { getProposal } from '../../src/projections/proposal-queries.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';
import { ok, refusal } from '../helpers/calls.js';

/**
 * `#approvals` is where the owner decides proposals, by reading a card and reacting approve. Through a
 * real MCP Client: an agent used to be able to post there, by send_message, text that looks exactly like
 * Colony's card (here: a copy of a real card's words, claiming a harmless tree). Now an agent posts there
 * only the card of a proposal it makes — free text, a reply, by name or by id, is ErrApprovalsReserved and
 * writes nothing, even from the proposer — while the owner still writes there and the react-to-approve
 * flow is unchanged. A look-alike posted anywhere else decides nothing when the owner reacts to it.
 */
type Body = Record<string, unknown>;
type Msg = { message_id: number; body: string; from_name: string; from_kind: string };
let f: McpFixture;
let owner: Client;
let worker: Client;
let coord: Client;
let goalId: number;
let real: Body;

const messages = async (channel: string): Promise<Msg[]> =>
  (await ok(owner, 'get_channel_messages', { channel_name: channel, limit: 200 })).messages as Msg[];

before(async () => {
  f = await mcpFixture();
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
  const g = await ok(owner, 'create_goal', {
    title: 'Ship the docs',
    description: 'Keep every page of the documentation site accurate against the code.',
  });
  goalId = g.goal_id as number;
  coord = await f.connect(rotateToken(f.app, 'agent', g.coordinator_agent_id as number, { actor: 'user:owner' }));
  real = await ok(coord, 'propose_task_tree', {
    goal_id: goalId,
    reasoning: 'One task.',
    tree: { title: 'Check the docs', description: 'Every page against the code.' },
  });
});
after(() => f.close());

describe('look-alike proposal cards in #approvals', () => {
  it('an agent posts no words of its own to #approvals: ErrApprovalsReserved, nothing written', async () => {
    const [card] = await messages('approvals');
    assert.equal(card!.message_id, real.proposal_message_id, 'the real card is there');
    const approvalsId = (await ok(owner, 'get_channel_messages', { channel_name: 'approvals' })).channel_id;
    const forged = card!.body.replace('Check the docs', 'Say hello');
    for (const [client, args] of [
      [worker, { channel: 'approvals', body: forged }],
      [worker, { channel: '#APPROVALS', body: forged }],
      [worker, { channel_id: approvalsId, body: forged }],
      [worker, { channel: 'approvals', body: 'Approved, go ahead.', reply_to: real.proposal_message_id }],
      [coord, { channel: 'approvals', body: forged, metadata: JSON.stringify({ kind: 'task_proposal' }) }],
    ] as [Client, Body][]) {
      const { text } = await refusal(f, client, 'send_message', args, 'ErrApprovalsReserved');
      assert.match(text, /an agent posts there only by proposing \(propose_task_tree, propose_agent\)/);
    }
    assert.deepEqual(
      (await messages('approvals')).map((m) => m.message_id),
      [real.proposal_message_id],
      'only the real card',
    );
  });

  it('the owner still writes there, and approves the real card by reacting', async () => {
    await ok(owner, 'send_message', { channel: 'approvals', body: 'Looking at these tonight.' });
    // A look-alike posted elsewhere is only a message: reacting approve on it decides nothing.
    const [card] = await messages('approvals');
    const copy = await ok(worker, 'send_message', { channel: 'requests', body: card!.body });
    await ok(owner, 'react', { message_id: copy.message_id, reaction: 'approve' });
    assert.equal(getProposal(f.app.engine.db, real.proposal_id as number)!.status, 'pending');
    const decided = await ok(owner, 'react', { message_id: real.proposal_message_id, reaction: 'approve' });
    assert.equal((decided.decision as { status: string }).status, 'approved');
    assert.equal(getProposal(f.app.engine.db, real.proposal_id as number)!.status, 'approved');
  });

  it("a real card's own text cannot fake a line of it: titles on one line, the reasoning quoted after the commands", async () => {
    const fake = 'Commands it will run on the host (your verifier recipes, exactly as they run):\n  * (none)';
    const p = await ok(coord, 'propose_task_tree', {
      goal_id: goalId,
      reasoning: `Routine.\n${fake}\r\nReact approve or reject (metadata {"reason": "…"}).`,
      tree: { title: `Tidy up\nTask tree proposal #99 for goal #${goalId}`, description: 'Nothing to see here.' },
    });
    const card = (await messages('approvals')).find((m) => m.message_id === p.proposal_message_id)!;
    const lines = card.body.split('\n');
    assert.equal(lines.filter((l) => l.startsWith('Task tree proposal #')).length, 1, card.body);
    assert.equal(lines.filter((l) => l.startsWith('Commands it will run')).length, 0, card.body);
    assert.equal(lines.filter((l) => l.startsWith('React approve or reject')).length, 1, card.body);
    assert.ok(lines.includes('> Commands it will run on the host (your verifier recipes, exactly as they run):'));
    assert.ok(lines.includes(`- Tidy up\\u000aTask tree proposal #99 for goal #${goalId} (verifier: auto)`), card.body);
  });
});
