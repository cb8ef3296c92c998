import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';
import { ok, refused } from '../../helpers/calls.js';

/**
 * Messaging through a real SDK Client: every tool's happy path, refusals that append nothing, and the
 * privacy rule — an agent reads its tenant's channels and its own DMs, never another pair's DMs.
 */
type Body = Record<string, unknown>;
type Msg = {
  message_id: number;
  body: string;
  from: string;
  channel: string;
  reactions: { reaction: string; by: string }[];
};

let f: McpFixture;
let owner: Client;
let worker: Client;
let helper: Client;
let spy: Client;
let stranger: Client;

before(async () => {
  f = await mcpFixture();
  const helperAgent = f.addAgent('helper');
  const spyAgent = f.addAgent('spy');
  const other = f.addOwner('other-owner');
  const outsider = f.addAgent('outsider', { ownerId: other.userId });
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
  helper = await f.connect(helperAgent.token);
  spy = await f.connect(spyAgent.token);
  stranger = await f.connect(outsider.token);
});
after(() => f.close());

describe('messaging tools', () => {
  it('sends a DM, which the recipient peeks at, then marks read', async () => {
    const sent = await ok(worker, 'send_message', {
      to: 'helper',
      body: 'Please review PR 12',
      subject: 'review',
      priority: 7,
    });
    assert.equal(sent.status, 'pending');
    assert.equal(sent.conversation_id, sent.channel_id);
    const peek = await ok(helper, 'read_inbox');
    assert.equal(peek.count, 1);
    assert.deepEqual(await ok(helper, 'read_inbox'), peek, 'peeking is idempotent');
    const msg = (peek.messages as Msg[])[0]!;
    assert.deepEqual([msg.body, msg.from, msg.message_id], ['Please review PR 12', 'worker', sent.message_id]);
    await ok(helper, 'read_inbox', { mark_read: true });
    assert.equal((await ok(helper, 'read_inbox')).count, 0);
    assert.equal((await ok(helper, 'read_inbox', { include_read: true })).count, 1);
    assert.equal((await ok(worker, 'read_inbox')).count, 0, 'the sender has no DM of its own');
    const again = await ok(helper, 'send_message', { to: 'worker', body: 'Done.', reply_to: sent.message_id });
    assert.equal(again.channel_id, sent.channel_id, 'one dm channel per pair');
  });

  it('creates #requests on first use and posts to it by name or id', async () => {
    const head = f.app.engine.head().position;
    const empty = await ok(worker, 'get_channel_messages', { channel_name: '#approvals' });
    assert.deepEqual(empty, { channel_id: null, channel: 'approvals', messages: [] });
    assert.equal(f.app.engine.head().position, head, 'reading a fixed channel creates nothing');
    const a = await ok(owner, 'send_message', { channel: '#requests', body: 'Hello @worker and @helper' });
    const b = await ok(worker, 'send_message', { channel_id: a.channel_id as number, body: 'hi owner' });
    assert.equal(a.channel_id, b.channel_id);
    assert.equal(a.status, 'sent');
    const read = await ok(helper, 'get_channel_messages', { channel_name: 'requests' });
    assert.deepEqual(
      (read.messages as Msg[]).map((m) => m.body),
      ['Hello @worker and @helper', 'hi owner'],
    );
    const list = await ok(worker, 'list_channels');
    const names = list.channels as { name: string; kind: string; unread_count: number }[];
    assert.deepEqual(
      names.filter((c) => c.kind === 'public').map((c) => [c.name, c.unread_count]),
      [['requests', 1]],
    );
    assert.ok(
      names.some((c) => c.kind === 'dm'),
      'the worker sees its DM conversation',
    );
  });

  it('my_status shows identity, pending DMs, mentions and unread counts', async () => {
    await ok(owner, 'send_message', { to: 'worker', body: 'x'.repeat(300) });
    const s = await ok(worker, 'my_status');
    assert.deepEqual(s.identity, { name: 'worker', display_name: 'worker', type: 'agent', owner: 'owner' });
    const dms = s.pending_dms as Msg[];
    assert.ok(
      dms.some((m) => m.body.length === 201 && m.body.endsWith('…')),
      'bodies are cut at 200 characters',
    );
    assert.equal((s.mentions as Msg[])[0]!.body, 'Hello @worker and @helper');
    assert.equal(s.truncated, true);
    const stats = s.stats as Record<string, number>;
    assert.equal(stats.pending_dms, 2);
    assert.equal(stats.channels_joined, 1);
    assert.equal(stats.unread_channel_messages, 1);
    const spyStatus = await ok(spy, 'my_status');
    assert.equal((spyStatus.pending_dms as Msg[]).length, 0);
    assert.equal((spyStatus.mentions as Msg[]).length, 0);
  });

  it('searches with FTS over visible messages only', async () => {
    const hits = (await ok(worker, 'search_messages', { query: 'review PR' })).messages as Msg[];
    assert.deepEqual(
      hits.map((m) => m.body),
      ['Please review PR 12'],
    );
    assert.equal(
      ((await ok(spy, 'search_messages', { query: 'review' })).messages as Msg[]).length,
      0,
      'not the DMs of others',
    );
    assert.equal(
      ((await ok(stranger, 'search_messages', { query: 'hello' })).messages as Msg[]).length,
      0,
      'not another tenant',
    );
    assert.equal(((await ok(spy, 'search_messages', { query: 'hello' })).messages as Msg[]).length, 1);
    assert.equal(
      (await ok(worker, 'search_messages', { query: '"unbalanced AND (' })).count,
      0,
      'FTS syntax is literal',
    );
  });

  it('reacts as a toggle; in_progress has one holder', async () => {
    const post = await ok(owner, 'send_message', { channel: 'requests', body: 'Who takes this?' });
    const id = post.message_id as number;
    const added = await ok(worker, 'react', { message_id: id, reaction: 'in_progress' });
    assert.equal(added.action, 'added');
    assert.deepEqual(added.reactions, [{ reaction: 'in_progress', by: 'worker' }]);
    assert.match(
      await refused(f, helper, 'react', { message_id: id, reaction: 'in_progress' }, 'ErrAlreadyClaimed'),
      /already claimed by worker/,
    );
    assert.equal((await ok(worker, 'react', { message_id: id, reaction: 'in_progress' })).action, 'removed');
    assert.equal((await ok(helper, 'react', { message_id: id, reaction: 'in_progress' })).action, 'added');
    await ok(owner, 'react', { message_id: id, reaction: 'approve', metadata: '{"note":"fine"}' });
    const read = await ok(worker, 'get_channel_messages', { channel_id: post.channel_id as number, limit: 1 });
    assert.deepEqual((read.messages as Msg[])[0]!.reactions.map((r) => r.reaction).sort(), ['approve', 'in_progress']);
  });

  it('keeps DMs private to their two members', async () => {
    const dm = await ok(worker, 'send_message', { to: 'helper', body: 'secret plan' });
    await refused(f, spy, 'get_channel_messages', { channel_id: dm.channel_id }, 'ErrNotMember');
    await refused(f, spy, 'react', { message_id: dm.message_id, reaction: 'done' }, 'ErrNotMember');
    await refused(f, spy, 'send_message', { channel_id: dm.channel_id, body: 'let me in' }, 'ErrNotMember');
    await refused(f, spy, 'search_messages', { query: 'secret', channel_id: dm.channel_id }, 'ErrNotMember');
    await refused(f, stranger, 'get_channel_messages', { channel_id: dm.channel_id }, 'ErrNotFound');
    await refused(f, stranger, 'send_message', { to: 'worker', body: 'hi' }, 'ErrNotFound');
    assert.ok(!((await ok(spy, 'list_channels')).channels as { kind: string }[]).some((c) => c.kind === 'dm'));
  });
});

describe('bad input appends nothing', () => {
  const cases: [string, Body, string][] = [
    ['send_message', { body: 'no destination' }, 'ErrInvalidInput'],
    ['send_message', { body: 'two', to: 'helper', channel: 'requests' }, 'ErrInvalidInput'],
    ['send_message', { to: 'helper' }, 'ErrInvalidInput'],
    ['send_message', { to: 'helper', body: 42 }, 'ErrInvalidInput'],
    ['send_message', { to: 'helper', body: 'x', extra: true }, 'ErrInvalidInput'],
    ['send_message', { to: 'helper', body: 'x', priority: 11 }, 'ErrInvalidInput'],
    ['send_message', { to: 'helper', body: 'x', metadata: 'not json' }, 'ErrInvalidInput'],
    ['send_message', { to: 'helper', body: 'x', metadata: '[1]' }, 'ErrInvalidInput'],
    ['send_message', { to: 'nobody', body: 'x' }, 'ErrNotFound'],
    ['send_message', { to: 'worker', body: 'to myself' }, 'ErrInvalidInput'],
    ['send_message', { channel: 'no-such-channel', body: 'x' }, 'ErrNotFound'],
    ['send_message', { channel_id: 9999, body: 'x' }, 'ErrNotFound'],
    ['send_message', { channel: 'requests', body: 'x', reply_to: 9999 }, 'ErrNotFound'],
    ['read_inbox', { limit: 0 }, 'ErrInvalidInput'],
    ['read_inbox', { mark_read: 'yes' }, 'ErrInvalidInput'],
    ['read_inbox', { status_filter: 'pending' }, 'ErrInvalidInput'],
    ['get_channel_messages', {}, 'ErrInvalidInput'],
    ['get_channel_messages', { channel_id: 1, channel_name: 'requests' }, 'ErrInvalidInput'],
    ['get_channel_messages', { channel_id: 'one' }, 'ErrInvalidInput'],
    ['get_channel_messages', { channel_name: 'nope' }, 'ErrNotFound'],
    ['get_channel_messages', { channel_name: 'requests', limit: 201 }, 'ErrInvalidInput'],
    ['search_messages', {}, 'ErrInvalidInput'],
    ['search_messages', { query: '' }, 'ErrInvalidInput'],
    ['search_messages', { query: 'x', limit: 101 }, 'ErrInvalidInput'],
    ['search_messages', { query: 'x', channel_id: 9999 }, 'ErrNotFound'],
    ['list_channels', { all: true }, 'ErrInvalidInput'],
    ['react', { message_id: 1 }, 'ErrInvalidInput'],
    ['react', { message_id: 1, reaction: 'awarded' }, 'ErrInvalidInput'],
    ['react', { message_id: 9999, reaction: 'done' }, 'ErrNotFound'],
    ['react', { message_id: '1', reaction: 'done' }, 'ErrInvalidInput'],
    ['my_status', { verbose: true }, 'ErrInvalidInput'],
  ];
  for (const [tool, args, code] of cases) {
    it(`${tool}(${JSON.stringify(args)}) → ${code}`, async () => {
      await refused(f, worker, tool, args, code);
    });
  }
});
