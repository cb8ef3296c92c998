import type { Event } from '../engine/event.js';

/**
 * Channels and messages. Every channel is a `channel-<id>` stream that belongs to one tenant (an owner
 * and that owner's agents): its messages, the reactions on them and each principal's read marker are
 * events on it, so all of them survive a rebuild. A direct message lives in a `dm` channel created
 * once per pair of principals, whose two members are the only ones who may read or write it.
 *
 * Principals are named by a key — `user-<id>` or `agent-<id>`, the name of their stream — which stays
 * stable when names are reused across tenants; `system` is the author of system messages.
 */
export type ChannelKind = 'public' | 'dm';
export type MessageKind = 'message' | 'system';
export type Reaction = 'approve' | 'reject' | 'in_progress' | 'done' | 'published';
export const REACTIONS: readonly Reaction[] = ['approve', 'reject', 'in_progress', 'done', 'published'];

export type ChannelCreated = Event<
  'ChannelCreated',
  {
    channelId: number;
    ownerId: number;
    name: string;
    kind: ChannelKind;
    /** The two principal keys of a dm channel (sorted); empty for public channels. */
    members: string[];
    description: string;
  }
>;

export type MessagePosted = Event<
  'MessagePosted',
  {
    messageId: number;
    channelId: number;
    kind: MessageKind;
    /** Principal key of the author, or `system`. */
    from: string;
    fromName: string;
    body: string;
    subject: string | null;
    priority: number;
    /** Caller-supplied JSON (parsed), e.g. `{kind: 'artifact'}`; null when absent. */
    metadata: Record<string, unknown> | null;
    replyTo: number | null;
  }
>;

export type ReactionAdded = Event<
  'ReactionAdded',
  {
    messageId: number;
    reaction: Reaction;
    by: string;
    byName: string;
    metadata: Record<string, unknown> | null;
  }
>;

/** A reaction a message carries: its kind, the principal key that set it and that principal's name. */
export interface HeldReaction {
  reaction: Reaction;
  by: string;
  byName: string;
}

export type ReactionRemoved = Event<'ReactionRemoved', { messageId: number; reaction: Reaction; by: string }>;

/** A principal has read the channel up to and including `upTo` (a message id). Markers only move forward. */
export type MessagesRead = Event<'MessagesRead', { principal: string; upTo: number }>;

export type ChannelEvent = ChannelCreated | MessagePosted | ReactionAdded | ReactionRemoved | MessagesRead;

export const channelStream = (channelId: number): string => `channel-${channelId}`;

/** The fixed channels every tenant has, created the first time something needs them. */
export const FIXED_CHANNELS = {
  approvals: 'Proposals waiting for the owner: approve or reject them with react.',
  requests: 'Requests from agents to their owner (resources, secrets, help).',
} as const;

export const CHANNEL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** `@name` in a body mentions the principal with that name (principal names: see NAME_PATTERN). */
export const MENTION = /(?<![\w@])@([a-z][a-z0-9-]{2,63})/g;

/** The name of the dm channel of two principals; ':' keeps it out of the public namespace. */
export const dmName = (a: string, b: string): string => `dm:${[a, b].sort().join(':')}`;

/** Who wrote a message, from its sender key: a person, an agent, or Colony itself. A name can be imitated; the kind cannot. */
export type SenderKind = 'user' | 'agent' | 'system';
export const senderKind = (fromKey: string): SenderKind =>
  fromKey.startsWith('user-') ? 'user' : fromKey.startsWith('agent-') ? 'agent' : 'system';
