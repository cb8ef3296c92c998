import { DomainError, invalidInput } from '../errors.js';
import {
  CHANNEL_NAME, REACTIONS, type ChannelCreated, type ChannelEvent, type MessageKind, type Reaction,
} from '../events/channels.js';
import type { Decider } from './decider.js';

/**
 * The channel decider (`channel-<id>` streams): creation, posting, reactions, read markers.
 * Who may speak here is decided from facts the caller looks up first and passes in (rule 2): the
 * acting principal's key and tenant. A public channel admits its tenant; a dm channel only its members.
 */
export interface Speaker {
  /** Principal key (`user-1`, `agent-3`) or `system`. */
  key: string;
  name: string;
  /** The owner id of the speaker's tenant. */
  tenant: number;
}

export type CreateChannel = { type: 'CreateChannel'; channel: ChannelCreated['data'] };
export type PostMessage = {
  type: 'PostMessage'; by: Speaker; kind: MessageKind; body: string; subject: string | null; priority: number;
  metadata: Record<string, unknown> | null; replyTo: number | null;
};
export type ToggleReaction = { type: 'ToggleReaction'; by: Speaker; messageId: number; reaction: Reaction; metadata: Record<string, unknown> | null };
export type MarkRead = { type: 'MarkRead'; by: Speaker; upTo: number };
export type ChannelCommand = CreateChannel | PostMessage | ToggleReaction | MarkRead;

interface Held { reaction: Reaction; by: string; byName: string }
export type Channel =
  | { status: 'absent' }
  | {
      status: 'open'; channelId: number; ownerId: number; kind: ChannelCreated['data']['kind']; members: readonly string[];
      /** Every message id of the channel with the reactions it carries. */
      messages: ReadonlyMap<number, readonly Held[]>;
      reads: ReadonlyMap<string, number>;
    };

export const MAX_REACTIONS = 100;
export const MAX_BODY = 16_000;

function evolve(state: Channel, event: ChannelEvent): Channel {
  if (event.type === 'ChannelCreated') {
    const c = event.data;
    return { status: 'open', channelId: c.channelId, ownerId: c.ownerId, kind: c.kind, members: c.members, messages: new Map(), reads: new Map() };
  }
  if (state.status !== 'open') return state;
  switch (event.type) {
    case 'MessagePosted':
      return { ...state, messages: new Map(state.messages).set(event.data.messageId, []) };
    case 'ReactionAdded':
    case 'ReactionRemoved': {
      const { messageId, reaction, by } = event.data;
      const rest = (state.messages.get(messageId) ?? []).filter((h) => !(h.reaction === reaction && h.by === by));
      const held = event.type === 'ReactionAdded' ? [...rest, { reaction, by, byName: event.data.byName }] : rest;
      return { ...state, messages: new Map(state.messages).set(messageId, held) };
    }
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
    if (state.status !== 'absent') throw new DomainError('ErrChannelExists', `channel ${command.channel.channelId} already exists`);
    checkChannel(command.channel);
    return [{ type: 'ChannelCreated', data: command.channel }];
  }
  if (state.status !== 'open') throw new DomainError('ErrNotFound', 'channel not found');
  checkMember(state, command.by);
  switch (command.type) {
    case 'PostMessage': {
      const body = command.body.trim();
      if (body.length === 0 || body.length > MAX_BODY) throw invalidInput(`body must be 1–${MAX_BODY} characters`, { field: 'body' });
      if (command.replyTo !== null && !state.messages.has(command.replyTo)) {
        throw new DomainError('ErrNotFound', `message ${command.replyTo} is not in this channel`, { reply_to: command.replyTo });
      }
      const { by } = command;
      return [{ type: 'MessagePosted', data: {
        messageId: ctx.ids.next('message'), channelId: state.channelId, kind: command.kind, from: by.key, fromName: by.name, body,
        subject: command.subject, priority: command.priority, metadata: command.metadata, replyTo: command.replyTo,
      } }];
    }
    case 'ToggleReaction':
      return toggle(state, command);
    case 'MarkRead': {
      // Markers name message ids the caller read from the projection, which also holds the goal-channel
      // notices projected from task events (they are not on this stream), so only the range is checked here.
      if (!Number.isSafeInteger(command.upTo) || command.upTo < 1) throw invalidInput('upTo must be a message id', { field: 'upTo' });
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
  if (!REACTIONS.includes(c.reaction)) throw new DomainError('ErrInvalidReaction', `reaction must be one of ${REACTIONS.join(', ')}`);
  const held = state.messages.get(c.messageId);
  if (!held) throw new DomainError('ErrNotFound', `message ${c.messageId} not found`, { message_id: c.messageId });
  if (held.some((h) => h.reaction === c.reaction && h.by === c.by.key)) {
    return [{ type: 'ReactionRemoved', data: { messageId: c.messageId, reaction: c.reaction, by: c.by.key } }];
  }
  if (held.length >= MAX_REACTIONS) throw new DomainError('ErrReactionLimit', `a message carries at most ${MAX_REACTIONS} reactions`);
  const claimer = c.reaction === 'in_progress' ? held.find((h) => h.reaction === 'in_progress') : undefined;
  if (claimer) throw new DomainError('ErrAlreadyClaimed', `already claimed by ${claimer.byName}`, { claimed_by: claimer.byName });
  return [{ type: 'ReactionAdded', data: { messageId: c.messageId, reaction: c.reaction, by: c.by.key, byName: c.by.name, metadata: c.metadata } }];
}

function checkMember(state: Extract<Channel, { status: 'open' }>, by: Speaker): void {
  if (by.key === 'system') return;
  const member = state.kind === 'dm' ? state.members.includes(by.key) : by.tenant === state.ownerId;
  if (!member) throw new DomainError('ErrNotMember', 'only channel members can read, post or react here', { channel_id: state.channelId });
}

function checkChannel(c: ChannelCreated['data']): void {
  if (c.kind === 'public' && !CHANNEL_NAME.test(c.name)) {
    throw invalidInput(`channel name "${c.name}" must match ${CHANNEL_NAME.source}`, { field: 'name' });
  }
  if (c.kind === 'dm' && (c.members.length !== 2 || c.members[0] === c.members[1])) throw invalidInput('a dm channel has two distinct members');
}

export const channelDecider: Decider<Channel, ChannelCommand, ChannelEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
