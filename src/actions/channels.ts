import type { App } from '../app.js';
import { APPROVALS, channelDecider, type PostMessage } from '../commands/channels.js';
import { DomainError, notFound } from '../errors.js';
import {
  channelStream,
  dmName,
  FIXED_CHANNELS,
  type MessagePosted,
  type Reaction,
  type ReactionAdded,
} from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import {
  getChannel,
  getChannelByName,
  messageFacts,
  readChannelByName,
  readMessageFacts,
  type ChannelRow,
} from '../projections/channel-queries.js';
import { decide, nextId, runUnit, type Unit } from '../engine/unit-of-work.js';
import { getAgentByName, getUser } from '../projections/principal-queries.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Messaging commands shared by the CLI and the MCP tools. Each function is one command (one
 * transaction): look up the facts the decider needs (channel by name, recipient by name), create a
 * channel on first use (the fixed ones, a dm channel per pair), then post / react / mark read.
 */
export type Message = Pick<PostMessage, 'body' | 'subject' | 'priority' | 'metadata' | 'replyTo'>;
export interface Sent {
  messageId: number;
  channelId: number;
}

/** A public channel by id, by `name` or `#name`, refusing what the speaker may not see. */
export function resolveChannel(app: App, by: Speaker, ref: { id?: number; name?: string }): ChannelRow {
  const db = app.engine.db;
  const name = ref.name?.replace(/^#/, '').toLowerCase();
  const channel = ref.id !== undefined ? getChannel(db, ref.id) : getChannelByName(db, by.tenant, name ?? '');
  const label = ref.id !== undefined ? `channel ${ref.id}` : `channel #${name}`;
  if (!channel || (channel.ownerId !== by.tenant && by.key !== 'system'))
    throw notFound(label, { channel: ref.id ?? ref.name });
  if (channel.kind === 'dm' && !channel.members.includes(by.key))
    throw new DomainError('ErrNotMember', `${label} is a direct conversation you are not part of`);
  return channel;
}

/** Whether `name` is a fixed channel that simply has not been needed yet (reads show it empty). */
export const isFixedChannel = (name: string): boolean =>
  Object.hasOwn(FIXED_CHANNELS, name.replace(/^#/, '').toLowerCase());

export function sendToChannel(
  app: App,
  by: Speaker,
  ref: { id?: number; name?: string },
  message: Message,
  actor: CommandOptions,
): Sent {
  return post(
    app,
    actor,
    () => {
      const fixed = ref.id === undefined && ref.name !== undefined && isFixedChannel(ref.name);
      return fixed
        ? ensureFixedChannel(app, by.tenant, ref.name!.replace(/^#/, '').toLowerCase(), actor)
        : resolveChannel(app, by, ref).channelId;
    },
    by,
    'message',
    message,
  );
}

/** A DM to an agent of the speaker's tenant or to its owner, by name. */
export function sendDirect(app: App, by: Speaker, to: string, message: Message, actor: CommandOptions): Sent {
  return post(
    app,
    actor,
    () => ensureDm(app, by.tenant, by.key, recipientKey(app, by.tenant, to), actor, to),
    by,
    'message',
    message,
  );
}

/** Creates a public channel of the tenant (e.g. a goal channel) inside the caller's command; its id. */
export function createPublicChannel(
  app: App,
  tenant: number,
  name: string,
  description: string,
  actor: CommandOptions,
): number {
  return app.engine.transact(actor, (uow) => {
    const nameTaken = getChannelByName(app.engine.db, tenant, name) !== null;
    const channelId = uow.ids.next('channel');
    const channel = { channelId, ownerId: tenant, name, kind: 'public' as const, members: [], description };
    app.engine.handle(channelDecider, channelStream(channelId), { type: 'CreateChannel', channel, nameTaken }, actor);
    return channelId;
  }).value!;
}

/**
 * A proposal's card in `#approvals`, posted by its proposer inside the command that records the proposal
 * (which names the card's message): the only way an agent posts there (commands/channels.ts).
 */
export function postApprovalCard(app: App, by: Speaker, card: Message, actor: CommandOptions): Sent {
  const channelOf = () => ensureFixedChannel(app, by.tenant, APPROVALS, actor);
  return post(app, actor, channelOf, by, 'message', card, true);
}

export function post(
  app: App,
  actor: CommandOptions,
  channelOf: () => number,
  by: Speaker,
  kind: PostMessage['kind'],
  m: Message,
  approvalCard = false,
): Sent {
  // channelOf reads SQLite synchronously: it runs inside the unit, in its transaction.
  const result = runUnit(app.engine, actor, () => postTo(channelOf(), by, kind, m, approvalCard));
  return result.value ?? sentIn(result.events);
}

/** One message to a channel, as a unit of work (engine/unit-of-work.ts) on either store. */
export function* postTo(
  channelId: number,
  by: Speaker,
  kind: PostMessage['kind'],
  m: Message,
  approvalCard = false,
): Unit<Sent> {
  const replyToChannel = m.replyTo === null ? null : ((yield* readMessageFacts(m.replyTo))?.channelId ?? null);
  const { events } = yield* decide(channelDecider, channelStream(channelId), {
    type: 'PostMessage',
    by,
    kind,
    ...m,
    replyToChannel,
    approvalCard,
  });
  return sentIn(events);
}

/** What a post answers, from its events (also a retry's, which has no value). */
export function sentIn(events: readonly StoredEvent[]): Sent {
  const posted = events.find((e): e is StoredEvent<MessagePosted> => e.type === 'MessagePosted')!;
  return { messageId: posted.data.messageId, channelId: posted.data.channelId };
}

export function ensureFixedChannel(app: App, tenant: number, name: string, actor: CommandOptions): number {
  return runUnit(app.engine, actor, () => ensureFixedChannelUnit(tenant, name)).value!;
}

export function ensureFixedChannelUnit(tenant: number, name: string): Unit<number> {
  return ensureChannel(tenant, name, 'public', [], FIXED_CHANNELS[name as keyof typeof FIXED_CHANNELS]);
}

/** `addressedAs`: for a direct message, the recipient as the sender named it (a message to oneself is refused). */
export function ensureDm(
  app: App,
  tenant: number,
  a: string,
  b: string,
  actor: CommandOptions,
  addressedAs?: string,
): number {
  return runUnit(app.engine, actor, () => ensureDmUnit(tenant, a, b, addressedAs)).value!;
}

export function ensureDmUnit(tenant: number, a: string, b: string, addressedAs?: string): Unit<number> {
  return ensureChannel(tenant, dmName(a, b), 'dm', [a, b].sort(), 'Direct messages', addressedAs);
}

/** Idempotent by name lookup, inside the caller's unit (so two writers cannot both create it). */
function* ensureChannel(
  tenant: number,
  name: string,
  kind: 'public' | 'dm',
  members: string[],
  description: string,
  addressedAs?: string,
): Unit<number> {
  const existing = yield* readChannelByName(tenant, name);
  if (existing) return existing.channelId;
  const channelId = yield* nextId('channel');
  yield* decide(channelDecider, channelStream(channelId), {
    type: 'CreateChannel',
    channel: { channelId, ownerId: tenant, name, kind, members, description },
    nameTaken: false, // looked up just above
    ...(addressedAs === undefined ? {} : { addressedAs }),
  });
  return channelId;
}

/**
 * A DM's recipient by name. People first, and `owner` always means the team's owner: agent names never
 * equal either (principals.ts), and even a name that slipped in earlier can never divert the owner's mail.
 */
function recipientKey(app: App, tenant: number, name: string): string {
  if (name === 'owner' || getUser(app.engine.db, tenant)?.name === name) return `user-${tenant}`;
  const agent = getAgentByName(app.engine.db, tenant, name);
  if (agent) return `agent-${agent.agentId}`;
  throw notFound(`agent ${name}`, { to: name });
}

/** Toggles the speaker's reaction on a message it can see; returns whether it is now set. */
export function toggleReaction(
  app: App,
  by: Speaker,
  messageId: number,
  reaction: Reaction,
  metadata: Record<string, unknown> | null,
  actor: CommandOptions,
): { added: boolean } {
  const result = app.engine.transact(actor, () => {
    const target = messageFacts(app.engine.db, messageId);
    if (!target) throw notFound(`message ${messageId}`, { message_id: messageId });
    resolveChannel(app, by, { id: target.channelId });
    app.engine.handle(
      channelDecider,
      channelStream(target.channelId),
      { type: 'ToggleReaction', by, messageId, reaction, metadata, target },
      actor,
    );
  });
  return { added: result.events.some((e): e is StoredEvent<ReactionAdded> => e.type === 'ReactionAdded') };
}

/** Moves the speaker's read marker forward in each channel, all in one command. */
export function markRead(app: App, by: Speaker, upTo: ReadonlyMap<number, number>, actor: CommandOptions): void {
  if (upTo.size === 0) return;
  app.engine.transact(actor, () => {
    for (const [channelId, messageId] of upTo) {
      app.engine.handle(channelDecider, channelStream(channelId), { type: 'MarkRead', by, upTo: messageId }, actor);
    }
  });
}
