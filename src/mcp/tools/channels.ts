import * as z from 'zod';
import { markRead, sendDirect, sendToChannel } from '../../actions/channels.js';
import { decisionView } from '../../actions/proposals/card.js';
import { reactTo } from '../../actions/proposals.js';
import { invalidInput } from '../../errors.js';
import { REACTIONS } from '../../events/channels.js';
import { getMessage, inbox } from '../../projections/channel-queries.js';
import { defineTool, type AnyTool } from '../tool.js';
import { getChannelMessagesTool, listChannelsTool, searchMessagesTool } from './channel-reads.js';
import { Decision, Message, metadataJson, parseMetadata, toMessage } from './channel-views.js';
import { speaker } from '../../events/principals.js';

/**
 * Messaging (SynapBus contracts): send_message, read_inbox, get_channel_messages, search_messages,
 * list_channels and react, listed in that order. The tools that only read are in channel-reads.ts, the
 * shapes they answer with in channel-views.ts; my_status is in channels-status.ts. Every read goes
 * through the visibility rule of channel-queries.ts: an agent sees its tenant's public channels and its
 * own DMs, nothing else. read_inbox is a write: with mark_read it marks what it returned read.
 */

const send = defineTool({
  name: 'send_message',
  title: 'Send a message',
  description:
    'Sends a message either directly to one agent (or your owner) by name with `to`, or to a channel with `channel` (name like "requests" or "#approvals") or `channel_id` — exactly one of them. Write `@name` in the body to mention someone. Direct messages land in the recipient\'s inbox (read_inbox). Errors: ErrInvalidInput (none or several destinations, bad metadata), ErrNotFound (no such agent, channel or reply_to message), ErrNotMember (a conversation you are not part of), ErrApprovalsReserved (an agent posting in #approvals, which holds the proposal cards the owner decides: propose with propose_task_tree or propose_agent instead).',
  trust: 'write',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({
    body: z.string().trim().min(1).max(16_000).describe('The message text'),
    to: z.string().min(1).max(64).optional().describe('Agent (or owner) name for a direct message'),
    channel: z.string().min(1).max(65).optional().describe('Channel name, with or without #'),
    channel_id: z.number().int().positive().optional().describe('Channel id (alternative to channel)'),
    subject: z.string().max(200).optional(),
    priority: z.number().int().min(1).max(10).default(5).describe('1 (low) to 10 (urgent)'),
    metadata: metadataJson.optional(),
    reply_to: z.number().int().positive().optional().describe('Message id this replies to (same conversation)'),
  }),
  output: z.object({
    message_id: z.number().int(),
    channel_id: z.number().int(),
    conversation_id: z.number().int().nullable(),
    status: z.enum(['sent', 'pending']),
  }),
  handler(ctx, a) {
    const destinations = [a.to, a.channel, a.channel_id].filter((d) => d !== undefined).length;
    if (destinations !== 1)
      throw invalidInput('give exactly one of to, channel or channel_id', { fields: ['to', 'channel', 'channel_id'] });
    const message = {
      body: a.body,
      subject: a.subject ?? null,
      priority: a.priority,
      metadata: parseMetadata(a.metadata),
      replyTo: a.reply_to ?? null,
    };
    const by = speaker(ctx.caller);
    if (a.to !== undefined) {
      const sent = sendDirect(ctx.app, by, a.to, message, ctx.command);
      return {
        message_id: sent.messageId,
        channel_id: sent.channelId,
        conversation_id: sent.channelId,
        status: 'pending' as const,
      };
    }
    const sent = sendToChannel(ctx.app, by, { id: a.channel_id, name: a.channel }, message, ctx.command);
    return { message_id: sent.messageId, channel_id: sent.channelId, conversation_id: null, status: 'sent' as const };
  },
});

const readInbox = defineTool({
  name: 'read_inbox',
  title: 'Read your inbox',
  description:
    'Lists direct messages sent to you, oldest first. By default it only peeks: unread messages stay unread, so calling it twice returns the same list. Pass mark_read: true to mark the returned messages read (they then stop appearing unless include_read is true). Filters: min_priority, from_agent (sender name).',
  trust: 'write',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({
    limit: z.number().int().min(1).max(200).default(50),
    include_read: z.boolean().default(false).describe('Also list messages already marked read'),
    mark_read: z.boolean().default(false).describe('Mark the returned messages read'),
    min_priority: z.number().int().min(1).max(10).default(1),
    from_agent: z.string().min(1).max(64).optional().describe('Only messages from this sender'),
  }),
  output: z.object({
    messages: z.array(Message),
    count: z.number().int(),
    total: z.number().int(),
    marked_read: z.boolean(),
  }),
  handler(ctx, a) {
    const by = speaker(ctx.caller);
    const found = inbox(ctx.app.engine.db, by, {
      includeRead: a.include_read,
      minPriority: a.min_priority,
      fromName: a.from_agent ?? null,
      limit: a.limit,
    });
    if (a.mark_read) {
      const upTo = new Map<number, number>();
      for (const m of found.messages) upTo.set(m.channelId, Math.max(upTo.get(m.channelId) ?? 0, m.messageId));
      markRead(ctx.app, by, upTo, ctx.command);
    }
    return {
      messages: found.messages.map((m) => toMessage(m)),
      count: found.messages.length,
      total: found.total,
      marked_read: a.mark_read,
    };
  },
});

const react = defineTool({
  name: 'react',
  title: 'React to a message',
  description:
    'Toggles your reaction on a message: calling it again with the same reaction removes it. in_progress says you are working on it and only one principal can hold it at a time; done marks it finished; approve / reject on a proposal in #approvals decide it — only the goal\'s owner may (metadata {"reason": "…"} gives a rejection\'s reason) and the answer says what the decision did: tasks created, the agent made, every command line it lets run on the host. Errors: ErrNotFound (no such message), ErrNotMember, ErrAlreadyClaimed (someone else holds in_progress), ErrReactionLimit (100 per message).',
  trust: 'write',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({
    message_id: z.number().int().positive(),
    reaction: z.enum(REACTIONS as [string, ...string[]]),
    metadata: metadataJson.optional(),
  }),
  output: z.object({
    message_id: z.number().int(),
    reaction: z.string(),
    action: z.enum(['added', 'removed']),
    reactions: z.array(z.object({ reaction: z.string(), by: z.string() })),
    decision: Decision.optional().describe(
      'Present when this reaction decided a proposal: what it did, as `colony approve|reject` says it',
    ),
  }),
  handler(ctx, a) {
    const { added, decided } = reactTo(
      ctx.app,
      speaker(ctx.caller),
      a.message_id,
      a.reaction as (typeof REACTIONS)[number],
      parseMetadata(a.metadata),
      ctx.command,
    );
    const reactions = getMessage(ctx.app.engine.db, a.message_id)?.reactions ?? [];
    const decision = decided ? { decision: decisionView(ctx.app.engine.db, decided.proposal, decided.taskIds) } : {};
    return {
      message_id: a.message_id,
      reaction: a.reaction,
      action: added ? ('added' as const) : ('removed' as const),
      reactions,
      ...decision,
    };
  },
  // The owner deciding by reaction reads what the decision did (tasks made, commands it lets run), not a bare toggle.
  text: (r) => (r.decision ? r.decision.summary : JSON.stringify(r)),
});

export const channelTools: readonly AnyTool[] = [
  send,
  readInbox,
  getChannelMessagesTool,
  searchMessagesTool,
  listChannelsTool,
  react,
];
