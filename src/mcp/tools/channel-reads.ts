import * as z from 'zod';
import { isFixedChannel, resolveChannel } from '../../actions/channels.js';
import { channelMessages, searchMessages, visibleChannels } from '../../projections/channel-queries.js';
import { defineTool } from '../tool.js';
import { channelRef, Message, refOf, toMessage } from './channel-views.js';
import { speaker } from '../../events/principals.js';

/**
 * The messaging tools that only read (SynapBus contracts): get_channel_messages, search_messages and
 * list_channels. Each goes through the visibility rule of channel-queries.ts: an agent sees its tenant's
 * public channels and its own DMs, nothing else.
 */

export const getChannelMessagesTool = defineTool({
  name: 'get_channel_messages',
  title: 'Read a channel',
  description:
    'Returns the latest messages of a channel (or of one of your direct conversations), oldest first, with their reactions. Name it by channel_id or channel_name. Page back with before_id. Errors: ErrNotFound (no such channel), ErrNotMember (a direct conversation of others).',
  trust: 'read',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({
    ...channelRef,
    limit: z.number().int().min(1).max(200).default(50),
    before_id: z.number().int().positive().optional(),
  }),
  output: z.object({ channel_id: z.number().int().nullable(), channel: z.string(), messages: z.array(Message) }),
  handler(ctx, a) {
    const ref = refOf(a);
    const by = speaker(ctx.caller);
    if (
      ref.name !== undefined &&
      isFixedChannel(ref.name) &&
      !visibleChannels(ctx.app.engine.db, by).some((c) => c.name === ref.name!.replace(/^#/, '').toLowerCase())
    ) {
      return { channel_id: null, channel: ref.name.replace(/^#/, '').toLowerCase(), messages: [] };
    }
    const channel = resolveChannel(ctx.app, by, ref);
    const messages = channelMessages(ctx.app.engine.db, channel.channelId, a.limit, a.before_id ?? null);
    return { channel_id: channel.channelId, channel: channel.name, messages: messages.map((m) => toMessage(m)) };
  },
});

export const searchMessagesTool = defineTool({
  name: 'search_messages',
  title: 'Search messages',
  description:
    'Full-text search over every message you can see (your direct messages and your channels), best match first. All words must appear; punctuation in the query is taken literally. Narrow with channel_id, from_agent or min_priority.',
  trust: 'read',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({
    query: z.string().trim().min(1).max(500),
    limit: z.number().int().min(1).max(100).default(10),
    min_priority: z.number().int().min(1).max(10).default(1),
    from_agent: z.string().min(1).max(64).optional(),
    channel_id: z.number().int().positive().optional(),
  }),
  output: z.object({ messages: z.array(Message), count: z.number().int() }),
  handler(ctx, a) {
    const by = speaker(ctx.caller);
    if (a.channel_id !== undefined) resolveChannel(ctx.app, by, { id: a.channel_id });
    const found = searchMessages(ctx.app.engine.db, by, a.query, {
      minPriority: a.min_priority,
      fromName: a.from_agent ?? null,
      channelId: a.channel_id ?? null,
      limit: a.limit,
    });
    return { messages: found.map((m) => toMessage(m)), count: found.length };
  },
});

export const listChannelsTool = defineTool({
  name: 'list_channels',
  title: 'List channels',
  description:
    'Lists the channels you can read — your team\'s public channels (#approvals, #requests, goal channels) and your direct conversations (kind "dm") — with message and unread counts.',
  trust: 'read',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({}),
  output: z.object({
    channels: z.array(
      z.object({
        channel_id: z.number().int(),
        name: z.string(),
        kind: z.enum(['public', 'dm']),
        description: z.string(),
        message_count: z.number().int(),
        unread_count: z.number().int(),
        last_message_at: z.string().nullable(),
      }),
    ),
  }),
  handler: (ctx) => ({
    channels: visibleChannels(ctx.app.engine.db, speaker(ctx.caller)).map((c) => ({
      channel_id: c.channelId,
      name: c.name,
      kind: c.kind,
      description: c.description,
      message_count: c.messageCount,
      unread_count: c.unreadCount,
      last_message_at: c.lastMessageAt,
    })),
  }),
});
