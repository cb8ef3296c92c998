import * as z from 'zod';
import { getUser } from '../../projections/principal-queries.js';
import { inbox, mentionsOf, systemNotifications, visibleChannels } from '../../projections/channel-queries.js';
import { defineTool } from '../tool.js';
import { Message, toMessage } from './channel-views.js';
import { speaker } from '../../events/principals.js';

/**
 * my_status — the agent's starting point (SynapBus contract): who am I, what waits for me, where.
 * Bounded like upstream: 10 pending DMs (bodies cut at 200 characters), 10 mentions, 5 system
 * notifications; `truncated` says when there is more, and `instructions` says how to get it.
 */
const LIMITS = { dms: 10, mentions: 10, system: 5, body: 200 } as const;

export const myStatus = defineTool({
  name: 'my_status',
  title: 'My status',
  description:
    'Call this first. Returns your identity (name, type, owner), up to 10 unread direct messages, your 10 latest @mentions, up to 5 unread system notifications, every channel you can read with its unread count, and totals in stats. It only reads: use read_inbox with mark_read to mark DMs read, get_channel_messages to read a channel in full.',
  trust: 'read',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({}),
  output: z.object({
    identity: z.object({
      name: z.string(),
      display_name: z.string(),
      type: z.enum(['human', 'agent']),
      owner: z.string(),
    }),
    pending_dms: z.array(Message),
    mentions: z.array(Message),
    system_notifications: z.array(Message),
    channels: z.array(
      z.object({ channel_id: z.number().int(), name: z.string(), kind: z.string(), unread_count: z.number().int() }),
    ),
    stats: z.object({
      pending_dms: z.number().int(),
      channels_joined: z.number().int(),
      unread_channel_messages: z.number().int(),
      system_notifications: z.number().int(),
    }),
    truncated: z.boolean(),
    instructions: z.string(),
  }),
  handler(ctx) {
    const db = ctx.app.engine.db;
    const me = speaker(ctx.caller);
    const dms = inbox(db, me, { includeRead: false, minPriority: 1, fromName: null, limit: LIMITS.dms });
    const mentions = mentionsOf(db, me, LIMITS.mentions);
    const system = systemNotifications(db, me, LIMITS.system);
    const channels = visibleChannels(db, me);
    const publicChannels = channels.filter((c) => c.kind !== 'dm');
    const truncated =
      dms.total > dms.messages.length ||
      system.total > system.messages.length ||
      dms.messages.some((m) => m.body.length > LIMITS.body);
    return {
      identity: {
        name: me.name,
        display_name: me.name,
        type: ctx.caller.kind === 'owner' ? ('human' as const) : ('agent' as const),
        owner: getUser(db, me.tenant)?.name ?? '',
      },
      pending_dms: dms.messages.map((m) => toMessage(m, LIMITS.body)),
      mentions: mentions.map((m) => toMessage(m, LIMITS.body)),
      system_notifications: system.messages.map((m) => toMessage(m, LIMITS.body)),
      channels: channels.map((c) => ({
        channel_id: c.channelId,
        name: c.name,
        kind: c.kind,
        unread_count: c.unreadCount,
      })),
      stats: {
        pending_dms: dms.total,
        channels_joined: publicChannels.length,
        unread_channel_messages: publicChannels.reduce((n, c) => n + c.unreadCount, 0),
        system_notifications: system.total,
      },
      truncated,
      instructions: truncated
        ? 'Some items were cut short: read_inbox lists every unread DM in full; get_channel_messages reads a channel.'
        : 'read_inbox (mark_read: true) to take your DMs; send_message to reply; get_channel_messages to read a channel.',
    };
  },
});
