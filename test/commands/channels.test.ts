import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { channelDecider, MAX_REACTIONS, type ChannelCommand } from '../../src/commands/channels.js';
import type { ChannelCreated, HeldReaction, MessagePosted, ReactionAdded } from '../../src/events/channels.js';
import { spec } from '../helpers/decider-spec.js';
import { type Speaker } from '../../src/events/principals.js';

const worker: Speaker = { key: 'agent-1', name: 'worker', tenant: 1 };
const helper: Speaker = { key: 'agent-2', name: 'helper', tenant: 1 };
const outsider: Speaker = { key: 'agent-9', name: 'outsider', tenant: 2 };
const system: Speaker = { key: 'system', name: 'system', tenant: 1 };

const requests: ChannelCreated = {
  type: 'ChannelCreated',
  data: { channelId: 3, ownerId: 1, name: 'requests', kind: 'public', members: [], description: 'r' },
};
const dm: ChannelCreated = {
  type: 'ChannelCreated',
  data: {
    channelId: 4,
    ownerId: 1,
    name: 'dm:agent-1:agent-2',
    kind: 'dm',
    members: ['agent-1', 'agent-2'],
    description: 'd',
  },
};
const posted = (messageId: number, channelId = 3, from = worker): MessagePosted => ({
  type: 'MessagePosted',
  data: {
    messageId,
    channelId,
    kind: 'message',
    from: from.key,
    fromName: from.name,
    body: 'hello',
    subject: null,
    priority: 5,
    metadata: null,
    replyTo: null,
  },
});
const reacted = (by: Speaker, reaction: ReactionAdded['data']['reaction'] = 'in_progress'): ReactionAdded => ({
  type: 'ReactionAdded',
  data: { messageId: 7, reaction, by: by.key, byName: by.name, metadata: null },
});
const post = (by: Speaker, extra: Partial<Extract<ChannelCommand, { type: 'PostMessage' }>> = {}): ChannelCommand => ({
  type: 'PostMessage',
  by,
  kind: 'message',
  body: 'hello',
  subject: null,
  priority: 5,
  metadata: null,
  replyTo: null,
  replyToChannel: null,
  approvalCard: false,
  ...extra,
});
// Message 7 as the projection holds it (the fact the caller passes in): in channel 3, carrying `held`.
const react = (
  by: Speaker,
  reaction: ReactionAdded['data']['reaction'] = 'in_progress',
  held: HeldReaction[] = [],
  channelId = 3,
): ChannelCommand => ({
  type: 'ToggleReaction',
  by,
  messageId: 7,
  reaction,
  metadata: null,
  target: { channelId, held },
});
const holds = (by: Speaker, reaction: HeldReaction['reaction'] = 'in_progress'): HeldReaction => ({
  reaction,
  by: by.key,
  byName: by.name,
});

describe('channel decider', () => {
  it('creates a channel once, with a valid name', () => {
    spec(channelDecider)
      .given([])
      .when({ type: 'CreateChannel', channel: requests.data, nameTaken: false })
      .then([requests]);
    spec(channelDecider)
      .given([requests])
      .when({ type: 'CreateChannel', channel: requests.data, nameTaken: false })
      .thenThrows('ErrChannelExists');
    spec(channelDecider)
      .given([])
      .when({ type: 'CreateChannel', channel: { ...requests.data, name: 'Bad Name' }, nameTaken: false })
      .thenThrows('ErrInvalidInput', 'name');
    spec(channelDecider)
      .given([])
      .when({ type: 'CreateChannel', channel: { ...dm.data, members: ['agent-1', 'agent-1'] }, nameTaken: false })
      .thenThrows('ErrInvalidInput');
  });

  it('posts a message with the next message id', () => {
    spec(channelDecider)
      .given([requests])
      .when(post(worker), { ids: { message: 6 } })
      .then([posted(7)]);
  });

  it('posts system messages as system', () => {
    const expected = {
      ...posted(1),
      data: { ...posted(1).data, kind: 'system' as const, from: 'system', fromName: 'system' },
    };
    spec(channelDecider)
      .given([requests])
      .when(post(system, { kind: 'system' }))
      .then([expected]);
  });

  it('#approvals: an agent posts only proposal cards there (ErrApprovalsReserved); the owner and system post freely', () => {
    const approvals: ChannelCreated = {
      type: 'ChannelCreated',
      data: { ...requests.data, channelId: 3, name: 'approvals', description: 'a' },
    };
    const owner: Speaker = { key: 'user-1', name: 'owner', tenant: 1 };
    for (const extra of [{}, { replyTo: 6, replyToChannel: 3 }])
      spec(channelDecider)
        .given([approvals])
        .when(post(worker, extra))
        .thenThrows('ErrApprovalsReserved', '^#approvals holds the proposal cards the owner decides');
    spec(channelDecider)
      .given([approvals])
      .when(post(worker, { approvalCard: true }), { ids: { message: 6 } })
      .then([posted(7)]);
    for (const by of [owner, system])
      spec(channelDecider)
        .given([approvals])
        .when(post(by), { ids: { message: 6 } })
        .then([posted(7, 3, by)]);
    spec(channelDecider)
      .given([requests])
      .when(post(worker, { approvalCard: true }))
      .thenFailsAsBug(/an approval card goes to #approvals, not #requests/);
  });

  it('refuses posts to a missing channel, empty bodies, unknown reply_to and outsiders', () => {
    spec(channelDecider).given([]).when(post(worker)).thenThrows('ErrNotFound');
    spec(channelDecider)
      .given([requests])
      .when(post(worker, { body: '   ' }))
      .thenThrows('ErrInvalidInput', 'body');
    spec(channelDecider)
      .given([requests])
      .when(post(worker, { replyTo: 99 }))
      .thenThrows('ErrNotFound', '99');
    spec(channelDecider)
      .given([requests])
      .when(post(worker, { replyTo: 99, replyToChannel: 4 }))
      .thenThrows('ErrNotFound', '99');
    spec(channelDecider)
      .given([requests])
      .when(post(worker, { replyTo: 99, replyToChannel: 3 }))
      .then([{ ...posted(1), data: { ...posted(1).data, replyTo: 99 } }]);
    spec(channelDecider).given([requests]).when(post(outsider)).thenThrows('ErrNotMember');
  });

  it('admits only the two members to a dm channel', () => {
    spec(channelDecider)
      .given([dm])
      .when(post(helper))
      .then([posted(1, 4, helper)]);
    spec(channelDecider)
      .given([dm])
      .when(post({ key: 'user-1', name: 'owner', tenant: 1 }))
      .thenThrows('ErrNotMember');
  });

  it('toggles reactions: a second call removes', () => {
    spec(channelDecider)
      .given([requests, posted(7)])
      .when(react(worker))
      .then([reacted(worker)]);
    spec(channelDecider)
      .given([requests, posted(7), reacted(worker)])
      .when(react(worker, 'in_progress', [holds(worker)]))
      .then([{ type: 'ReactionRemoved', data: { messageId: 7, reaction: 'in_progress', by: worker.key } }]);
  });

  it('gives in_progress to one holder at a time', () => {
    spec(channelDecider)
      .given([requests, posted(7), reacted(worker)])
      .when(react(helper, 'in_progress', [holds(worker)]))
      .thenThrows('ErrAlreadyClaimed', 'already claimed by worker');
    spec(channelDecider)
      .given([
        requests,
        posted(7),
        reacted(worker),
        { type: 'ReactionRemoved', data: { messageId: 7, reaction: 'in_progress', by: worker.key } },
      ])
      .when(react(helper))
      .then([reacted(helper)]);
    spec(channelDecider)
      .given([requests, posted(7), reacted(worker)])
      .when(react(helper, 'done', [holds(worker)]))
      .then([reacted(helper, 'done')]);
  });

  it('refuses unknown reactions and messages, and more than the limit', () => {
    spec(channelDecider)
      .given([requests, posted(7)])
      .when(react(worker, 'awarded' as never))
      .thenThrows('ErrInvalidReaction');
    spec(channelDecider)
      .given([requests])
      .when({ ...react(worker), target: null } as ChannelCommand)
      .thenThrows('ErrNotFound');
    // A message of another channel is not found here, whatever its reactions.
    spec(channelDecider)
      .given([requests])
      .when(react(worker, 'done', [], 4))
      .thenThrows('ErrNotFound');
    const others = Array.from({ length: MAX_REACTIONS }, (_, i) => ({
      key: `agent-${100 + i}`,
      name: `a${i}`,
      tenant: 1,
    }));
    const full = others.map((o) => reacted(o, 'done'));
    spec(channelDecider)
      .given([requests, posted(7), ...full])
      .when(
        react(
          worker,
          'approve',
          others.map((o) => holds(o, 'done')),
        ),
      )
      .thenThrows('ErrReactionLimit');
  });

  it('moves read markers forward only', () => {
    const read = { type: 'MessagesRead' as const, data: { principal: worker.key, upTo: 7 } };
    spec(channelDecider)
      .given([requests, posted(7)])
      .when({ type: 'MarkRead', by: worker, upTo: 7 })
      .then([read]);
    spec(channelDecider)
      .given([requests, posted(5), posted(7), read])
      .when({ type: 'MarkRead', by: worker, upTo: 5 })
      .thenNothingHappened();
    spec(channelDecider)
      .given([requests])
      .when({ type: 'MarkRead', by: worker, upTo: 0 })
      .thenThrows('ErrInvalidInput');
  });
});

describe('channel decider: facts the caller passes in', () => {
  it('refuses a name the tenant already uses (ErrChannelExists, nothing written); a free one is created', () => {
    const e = spec(channelDecider)
      .given([])
      .when({ type: 'CreateChannel', channel: requests.data, nameTaken: true })
      .thenThrows('ErrChannelExists', 'channel #requests already exists');
    assert.deepEqual(e.details, { name: 'requests' });
    spec(channelDecider)
      .given([])
      .when({ type: 'CreateChannel', channel: requests.data, nameTaken: false })
      .then([requests]);
  });

  it('refuses a direct message to oneself, naming the recipient as the sender wrote it', () => {
    const self = { ...dm.data, name: 'dm:agent-1:agent-1', members: ['agent-1', 'agent-1'] };
    const e = spec(channelDecider)
      .given([])
      .when({ type: 'CreateChannel', channel: self, addressedAs: 'worker', nameTaken: false })
      .thenThrows('ErrInvalidInput', 'you cannot send a direct message to yourself');
    assert.deepEqual(e.details, { to: 'worker' });
    spec(channelDecider)
      .given([])
      .when({ type: 'CreateChannel', channel: dm.data, addressedAs: 'helper', nameTaken: false })
      .then([dm]);
  });
});
