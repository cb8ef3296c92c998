import { isFixedChannel, resolveChannel } from '../../actions/channels.js';
import { readConsistent } from '../../engine/db.js';
import { senderKind } from '../../events/channels.js';
import { channelMessages, visibleChannels } from '../../projections/channel-queries.js';
import type { McpContext } from '../context.js';
import { fenced, UNTRUSTED_NOTE } from './quote.js';
import { bullets, section } from './text.js';
import { userMessage, type PromptDefinition } from './types.js';
import { type Caller } from '../../events/principals.js';
import { speaker } from '../../events/principals.js';

/**
 * channel-overview (SynapBus's prompt): with no argument, as upstream, every channel the caller can read
 * with its message and unread counts; with `channel`, that channel's latest messages (each quoted and
 * cut) and who is active in it. Visibility is get_channel_messages' own (resolveChannel): the team's
 * public channels and the caller's own direct conversations.
 */
const SHOWN = 30;
const ACTIVITY = 200;

function allChannels(ctx: McpContext, caller: Caller): string {
  const rows = visibleChannels(ctx.app.engine.db, speaker(caller)).map(
    (c) => `| #${c.name} | ${c.kind} | ${c.messageCount} | ${c.unreadCount} | ${c.lastMessageAt ?? 'never'} |`,
  );
  return [
    '# Channel overview',
    '| Channel | Kind | Messages | Unread | Last message |',
    '|---|---|---|---|---|',
    ...(rows.length ? rows : ['| (no channels) | | | | |']),
    `\n*Total channels: ${rows.length}*`,
    'Summarise where the activity is and which channels have unread messages that need a reply.',
  ].join('\n');
}

function oneChannel(ctx: McpContext, caller: Caller, name: string): string {
  const db = ctx.app.engine.db;
  const by = speaker(caller);
  const bare = name.replace(/^#/, '').toLowerCase();
  // A fixed channel (#approvals, #requests) nobody has needed yet reads empty, as get_channel_messages answers.
  const fixedUnused = isFixedChannel(bare) && !visibleChannels(db, by).some((c) => c.name === bare);
  const channel = fixedUnused ? null : resolveChannel(ctx.app, by, { name: bare });
  const recent = channel ? channelMessages(db, channel.channelId, ACTIVITY, null) : [];
  const active = new Map<string, { n: number; last: string; kind: string }>();
  for (const m of recent)
    active.set(m.fromName, { n: (active.get(m.fromName)?.n ?? 0) + 1, last: m.createdAt, kind: senderKind(m.fromKey) });
  const messages = recent
    .slice(-SHOWN)
    .map(
      (m) =>
        `message ${m.messageId} from ${m.fromName} (${senderKind(m.fromKey)}) at ${m.createdAt}, priority ${m.priority}${m.replyTo ? `, reply to ${m.replyTo}` : ''}:\n${fenced(m.body, 600)}`,
    );
  return [
    `# Channel overview: #${channel?.name ?? bare}`,
    UNTRUSTED_NOTE,
    section(
      `Who is active (last ${ACTIVITY} messages)`,
      bullets(
        [...active.entries()]
          .sort((a, b) => b[1].n - a[1].n)
          .map(([who, a]) => `${who} (${a.kind}): ${a.n} message(s), last at ${a.last}`),
      ),
    ),
    section(
      `Latest ${Math.min(SHOWN, recent.length)} messages, oldest first`,
      messages.join('\n\n') || '(no messages)',
    ),
    'Summarise this channel: what is being discussed, what was decided, and what is waiting for an answer (and from whom).',
  ].join('\n\n');
}

export const channelOverview: PromptDefinition = {
  entry: {
    name: 'channel-overview',
    title: 'Channel overview',
    description:
      "Without channel: every channel you can read with message and unread counts. With channel: that channel's recent messages and who is active in it.",
    arguments: [
      {
        name: 'channel',
        description: 'A channel name such as approvals or #goal-my-goal (default: all channels)',
        required: false,
      },
    ],
  },
  needs: ['get_channel_messages'],
  render(ctx, caller, args) {
    const name = args.channel?.trim();
    return readConsistent(ctx.app.engine.db, () =>
      name
        ? {
            description: `Overview of channel #${name.replace(/^#/, '').slice(0, 65)}`,
            messages: [userMessage(oneChannel(ctx, caller, name))],
          }
        : { description: 'Overview of all channels', messages: [userMessage(allChannels(ctx, caller))] },
    );
  },
};
