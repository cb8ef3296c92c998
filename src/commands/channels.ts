import { DomainError, invalidInput } from '../errors.js';
import {
  CHANNEL_NAME,
  REACTIONS,
  type ChannelCreated,
  type ChannelEvent,
  type HeldReaction,
  type MessageKind,
  type Reaction,
} from '../events/channels.js';
import type { Decider } from '../engine/decider.js';
import { type Speaker } from '../events/principals.js';

/**
 * The channel decider (`channel-<id>` streams): creation, posting, reactions, read markers.
 * Who may speak here is decided from facts the caller looks up first and passes in: the acting
 * principal's key and tenant. A public channel admits its tenant; a dm channel only its members.
 * `#approvals` is where the owner decides proposals: there an agent posts only the card of a proposal it
 * makes (propose_task_tree, propose_agent), never words of its own, so nothing an agent writes there can
 * pass for a card. The owner and Colony itself post there freely.
 *
 * The state is bounded (docs/architecture.md, "Aggregates stay small"): it never holds the channel's messages, so a
 * post costs the same in a channel of 100,000 messages as in an empty one. What a decision needs about
 * one message — the channel it is in, the reactions it carries — is looked up by the caller in the
 * projections, inside the command's own transaction, and passed in with the command.
 */

export type CreateChannel = {
  type: 'CreateChannel';
  channel: ChannelCreated['data'];
  /** Fact: the tenant has a channel of this name already (names are unique within a tenant). */
  nameTaken: boolean;
  /** For a dm opened by a direct message: the recipient as the sender named it. */
  addressedAs?: string;
};
export type PostMessage = {
  type: 'PostMessage';
  by: Speaker;
  kind: MessageKind;
  body: string;
  subject: string | null;
  priority: number;
  metadata: Record<string, unknown> | null;
  replyTo: number | null;
  /** Fact: the channel the `replyTo` message is in (null: no such message). */
  replyToChannel: number | null;
  /** This post is the `#approvals` card of a proposal the same command records (actions/channels.ts, postApprovalCard). */
  approvalCard: boolean;
};
type Held = HeldReaction;
export type ToggleReaction = {
  type: 'ToggleReaction';
  by: Speaker;
  messageId: number;
  reaction: Reaction;
  metadata: Record<string, unknown> | null;
  /** Fact: the message as the projection holds it — its channel and its reactions (null: no such message). */
  target: { channelId: number; held: readonly Held[] } | null;
};
export type MarkRead = { type: 'MarkRead'; by: Speaker; upTo: number };
export type ChannelCommand = CreateChannel | PostMessage | ToggleReaction | MarkRead;

export type Channel =
  | { status: 'absent' }
  | {
      status: 'open';
      channelId: number;
      ownerId: number;
      name: string;
      kind: ChannelCreated['data']['kind'];
      members: readonly string[];
      /** Each principal's read marker: one entry per reader, so bounded by the tenant's size, not by the history. */
      reads: ReadonlyMap<string, number>;
    };

export const MAX_REACTIONS = 100;
export const MAX_BODY = 16_000;

function evolve(state: Channel, event: ChannelEvent): Channel {
  if (event.type === 'ChannelCreated') {
    const c = event.data;
    return {
      status: 'open',
      channelId: c.channelId,
      ownerId: c.ownerId,
      name: c.name,
      kind: c.kind,
      members: c.members,
      reads: new Map(),
    };
  }
  if (state.status !== 'open') return state;
  switch (event.type) {
    // Messages and reactions live in the projection; no decision reads them from the state.
    case 'MessagePosted':
    case 'ReactionAdded':
    case 'ReactionRemoved':
      return state;
    case 'MessagesRead':
      return { ...state, reads: new Map(state.reads).set(event.data.principal, event.data.upTo) };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: ChannelCommand, state: Channel, ctx: { ids: { next(kind: string): number } }): ChannelEvent[] {
  if (command.type === 'CreateChannel') {
    if (state.status !== 'absent')
      throw new DomainError('ErrChannelExists', `channel ${command.channel.channelId} already exists`);
    if (command.nameTaken) {
      const name = command.channel.name;
      throw new DomainError('ErrChannelExists', `channel #${name} already exists`, { name });
    }
    checkChannel(command.channel, command.addressedAs);
    return [{ type: 'ChannelCreated', data: command.channel }];
  }
  if (state.status !== 'open') throw new DomainError('ErrNotFound', 'channel not found');
  checkMember(state, command.by);
  switch (command.type) {
    case 'PostMessage': {
      const body = command.body.trim();
      if (body.length === 0 || body.length > MAX_BODY)
        throw invalidInput(`body must be 1–${MAX_BODY} characters`, { field: 'body' });
      if (command.replyTo !== null && command.replyToChannel !== state.channelId) {
        throw new DomainError('ErrNotFound', `message ${command.replyTo} is not in this channel`, {
          reply_to: command.replyTo,
        });
      }
      checkApprovals(state, command);
      const { by } = command;
      return [
        {
          type: 'MessagePosted',
          data: {
            messageId: ctx.ids.next('message'),
            channelId: state.channelId,
            kind: command.kind,
            from: by.key,
            fromName: by.name,
            body,
            subject: command.subject,
            priority: command.priority,
            metadata: command.metadata,
            replyTo: command.replyTo,
          },
        },
      ];
    }
    case 'ToggleReaction':
      return toggle(state, command);
    case 'MarkRead': {
      // Markers name message ids the caller read from the projection, which also holds the goal-channel
      // notices projected from task events (they are not on this stream), so only the range is checked here.
      if (!Number.isSafeInteger(command.upTo) || command.upTo < 1)
        throw invalidInput('upTo must be a message id', { field: 'upTo' });
      return command.upTo > (state.reads.get(command.by.key) ?? 0)
        ? [{ type: 'MessagesRead', data: { principal: command.by.key, upTo: command.upTo } }]
        : [];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

/** React is a toggle (SynapBus): a second call removes the caller's reaction. */
function toggle(state: Extract<Channel, { status: 'open' }>, c: ToggleReaction): ChannelEvent[] {
  if (!REACTIONS.includes(c.reaction))
    throw new DomainError('ErrInvalidReaction', `reaction must be one of ${REACTIONS.join(', ')}`);
  const held = c.target?.channelId === state.channelId ? c.target.held : undefined;
  if (!held) throw new DomainError('ErrNotFound', `message ${c.messageId} not found`, { message_id: c.messageId });
  if (held.some((h) => h.reaction === c.reaction && h.by === c.by.key)) {
    return [{ type: 'ReactionRemoved', data: { messageId: c.messageId, reaction: c.reaction, by: c.by.key } }];
  }
  if (held.length >= MAX_REACTIONS)
    throw new DomainError('ErrReactionLimit', `a message carries at most ${MAX_REACTIONS} reactions`);
  const claimer = c.reaction === 'in_progress' ? held.find((h) => h.reaction === 'in_progress') : undefined;
  if (claimer)
    throw new DomainError('ErrAlreadyClaimed', `already claimed by ${claimer.byName}`, { claimed_by: claimer.byName });
  return [
    {
      type: 'ReactionAdded',
      data: { messageId: c.messageId, reaction: c.reaction, by: c.by.key, byName: c.by.name, metadata: c.metadata },
    },
  ];
}

/** The channel where proposals are decided (FIXED_CHANNELS). */
export const APPROVALS = 'approvals';

/** In `#approvals` an agent posts proposal cards only; a card goes nowhere else. */
function checkApprovals(state: Extract<Channel, { status: 'open' }>, c: PostMessage): void {
  const approvals = state.kind === 'public' && state.name === APPROVALS;
  if (c.approvalCard && !approvals) throw new Error(`an approval card goes to #${APPROVALS}, not #${state.name}`);
  if (approvals && !c.approvalCard && c.by.key.startsWith('agent-'))
    throw new DomainError(
      'ErrApprovalsReserved',
      `#${APPROVALS} holds the proposal cards the owner decides, and the owner's words: an agent posts there only by proposing (propose_task_tree, propose_agent). Write to your owner directly (send_message {"to": "owner"}) or in #requests.`,
      { channel: APPROVALS },
    );
}

function checkMember(state: Extract<Channel, { status: 'open' }>, by: Speaker): void {
  if (by.key === 'system') return;
  const member = state.kind === 'dm' ? state.members.includes(by.key) : by.tenant === state.ownerId;
  if (!member)
    throw new DomainError('ErrNotMember', 'only channel members can read, post or react here', {
      channel_id: state.channelId,
    });
}

/** A public channel's name is a slug; a dm channel has two distinct members — nobody sends a direct message to itself. */
function checkChannel(c: ChannelCreated['data'], addressedAs: string | undefined): void {
  if (c.kind === 'public' && !CHANNEL_NAME.test(c.name)) {
    throw invalidInput(`channel name "${c.name}" must match ${CHANNEL_NAME.source}`, { field: 'name' });
  }
  if (c.kind !== 'dm') return;
  if (addressedAs !== undefined && c.members.length === 2 && c.members[0] === c.members[1])
    throw invalidInput('you cannot send a direct message to yourself', { to: addressedAs });
  if (c.members.length !== 2 || c.members[0] === c.members[1])
    throw invalidInput('a dm channel has two distinct members');
}

export const channelDecider: Decider<Channel, ChannelCommand, ChannelEvent> = {
  snapshot: { name: 'channel', version: 2 }, // 2: the state holds the channel's name
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
