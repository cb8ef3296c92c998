import * as z from 'zod';
import { senderKind } from '../../events/channels.js';
import { invalidInput } from '../../errors.js';
import type { MessageRow } from '../../projections/channel-queries.js';

/**
 * The shapes the messaging tools answer with (channels.ts, channel-reads.ts, channels-status.ts), and
 * the argument pieces they share. A message says who wrote it by kind as well as by name (`from_kind`),
 * since a name alone can be imitated.
 */
export const Message = z.object({
  message_id: z.number().int(),
  channel_id: z.number().int(),
  channel: z.string(),
  kind: z.enum(['message', 'system']),
  from: z.string(),
  from_kind: z
    .enum(['user', 'agent', 'system'])
    .describe('Who wrote it: a person (user), an agent, or Colony itself (system) — names alone can be imitated'),
  body: z.string(),
  subject: z.string().nullable(),
  priority: z.number().int(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  reply_to: z.number().int().nullable(),
  created_at: z.string(),
  reactions: z.array(z.object({ reaction: z.string(), by: z.string() })),
});
export const toMessage = (m: MessageRow, maxBody = Infinity): z.infer<typeof Message> => ({
  message_id: m.messageId,
  channel_id: m.channelId,
  channel: m.channelName,
  kind: m.kind,
  from: m.fromName,
  from_kind: senderKind(m.fromKey),
  body: m.body.length > maxBody ? `${m.body.slice(0, maxBody)}…` : m.body,
  subject: m.subject,
  priority: m.priority,
  metadata: m.metadata,
  reply_to: m.replyTo,
  created_at: m.createdAt,
  reactions: m.reactions,
});

export const metadataJson = z.string().max(8000).describe('JSON object as a string, e.g. {"kind":"artifact"}');
export function parseMetadata(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidInput('metadata must be a JSON object encoded as a string', { field: 'metadata' });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidInput('metadata must be a JSON object', { field: 'metadata' });
  return value as Record<string, unknown>;
}

export const channelRef = {
  channel_id: z.number().int().positive().optional().describe('Channel id'),
  channel_name: z.string().min(1).max(65).optional().describe('Channel name, with or without #'),
};
export function refOf(a: { channel_id?: number; channel_name?: string }): { id?: number; name?: string } {
  if ((a.channel_id === undefined) === (a.channel_name === undefined))
    throw invalidInput('give exactly one of channel_id or channel_name');
  return { id: a.channel_id, name: a.channel_name };
}

/** What a reaction that decided a proposal did, as `colony approve|reject` says it. */
export const Decision = z.object({
  proposal_id: z.number().int(),
  status: z.string(),
  task_ids: z.array(z.number().int()),
  agent_id: z.number().int().nullable().optional(),
  commands: z.array(z.string()),
  summary: z.string(),
});
