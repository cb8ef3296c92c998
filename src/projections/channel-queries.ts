import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { all, applySteps, get, type Steps } from '../engine/projection-sql.js';
import type { ChannelKind, HeldReaction, MessageKind, Reaction } from '../events/channels.js';

/**
 * Reads over the channels projection (live table names). "Visible" is the rule every read shares: a
 * principal sees its tenant's public channels and the dm channels it is a member of — never another
 * pair's DMs, never another tenant's channels.
 */
export interface Viewer {
  key: string;
  tenant: number;
  name: string;
}

export interface ChannelRow {
  channelId: number;
  ownerId: number;
  name: string;
  kind: ChannelKind;
  members: string[];
  description: string;
  createdAt: string;
}
export interface ChannelSummary {
  channelId: number;
  name: string;
  kind: ChannelKind;
  description: string;
  messageCount: number;
  unreadCount: number;
  lastMessageAt: string | null;
}
export interface MessageRow {
  messageId: number;
  channelId: number;
  channelName: string;
  kind: MessageKind;
  fromKey: string;
  fromName: string;
  body: string;
  subject: string | null;
  priority: number;
  metadata: Record<string, unknown> | null;
  replyTo: number | null;
  createdAt: string;
  reactions: { reaction: Reaction; by: string }[];
}

const VISIBLE = `c.owner_id = @tenant AND (c.kind <> 'dm' OR c.member_a = @key OR c.member_b = @key)`;
const CHANNEL = `SELECT channel_id AS channelId, owner_id AS ownerId, name, kind, member_a, member_b, description, created_at AS createdAt FROM channels`;
const COLUMNS = `SELECT m.message_id AS messageId, m.channel_id AS channelId, c.name AS channelName, m.kind, m.from_key AS fromKey,
  m.from_name AS fromName, m.body, m.subject, m.priority, m.metadata, m.reply_to AS replyTo, m.created_at AS createdAt`;
const MESSAGE = `${COLUMNS} FROM messages m JOIN channels c ON c.channel_id = m.channel_id`;
/** Only the parameters the visibility rule binds (better-sqlite3 wants exactly the named ones used). */
const vis = (v: Viewer) => ({ tenant: v.tenant, key: v.key });
const UNREAD = `m.message_id > coalesce((SELECT last_read_id FROM read_markers r WHERE r.channel_id = m.channel_id AND r.principal = @key), 0)`;

const toChannel = (r: Record<string, unknown> | undefined): ChannelRow | null => {
  if (!r) return null;
  const { member_a, member_b, ...rest } = r;
  return { ...rest, members: [member_a, member_b].filter((m) => m !== null) } as ChannelRow;
};

export const getChannel = (db: Database, channelId: number): ChannelRow | null =>
  toChannel(prepared(db, `${CHANNEL} WHERE channel_id = ?`).get(channelId) as never);
export function* readChannelByName(ownerId: number, name: string): Steps<ChannelRow | null> {
  return toChannel(yield* get(`${CHANNEL} WHERE owner_id = ? AND name = ?`, ownerId, name));
}
export const getChannelByName = (db: Database, ownerId: number, name: string): ChannelRow | null =>
  applySteps(db, readChannelByName(ownerId, name));

export const visibleChannels = (db: Database, v: Viewer): ChannelSummary[] =>
  prepared(
    db,
    `SELECT c.channel_id AS channelId, c.name, c.kind, c.description,
      (SELECT count(*) FROM messages m WHERE m.channel_id = c.channel_id) AS messageCount,
      (SELECT count(*) FROM messages m WHERE m.channel_id = c.channel_id AND m.from_key <> @key AND ${UNREAD}) AS unreadCount,
      (SELECT max(m.created_at) FROM messages m WHERE m.channel_id = c.channel_id) AS lastMessageAt
    FROM channels c WHERE ${VISIBLE} ORDER BY c.kind DESC, c.channel_id`,
  ).all(vis(v)) as ChannelSummary[];

/** The last `limit` messages of a channel (before `beforeId` if given), oldest first. */
/** The channel's newest `limit` messages before `beforeId`, oldest first; `from` keeps Colony's notices only, or people's and agents' only. */
export function channelMessages(
  db: Database,
  channelId: number,
  limit: number,
  beforeId: number | null,
  from: 'all' | 'system' | 'people' = 'all',
): MessageRow[] {
  const who = from === 'all' ? '' : from === 'system' ? ` AND m.from_key = 'system'` : ` AND m.from_key <> 'system'`;
  const rows = prepared(
    db,
    `${MESSAGE} WHERE m.channel_id = ? AND m.message_id < ?${who} ORDER BY m.message_id DESC LIMIT ?`,
  ).all(channelId, beforeId ?? Number.MAX_SAFE_INTEGER, limit);
  return withReactions(db, rows.reverse());
}

export interface InboxFilter {
  includeRead: boolean;
  minPriority: number;
  fromName: string | null;
  limit: number;
}

/** DMs to the viewer (unread unless `includeRead`), oldest first; `total` counts all that match. */
export function inbox(db: Database, v: Viewer, f: InboxFilter): { messages: MessageRow[]; total: number } {
  const where = `FROM messages m JOIN channels c ON c.channel_id = m.channel_id
    WHERE c.kind = 'dm' AND ${VISIBLE} AND m.from_key <> @key AND (@all = 1 OR ${UNREAD})
      AND m.priority >= @min AND (@from IS NULL OR m.from_name = @from)`;
  const params = { ...vis(v), all: f.includeRead ? 1 : 0, min: f.minPriority, from: f.fromName, limit: f.limit };
  const rows = prepared(db, `${COLUMNS} ${where} ORDER BY m.message_id LIMIT @limit`).all(params);
  const { limit: _limit, ...counted } = params;
  const total = (prepared(db, `SELECT count(*) AS n ${where}`).get(counted) as { n: number }).n;
  return { messages: withReactions(db, rows), total };
}

/** Messages in visible channels that mention the viewer by name, newest first. */
export function mentionsOf(db: Database, v: Viewer, limit: number): MessageRow[] {
  const rows = prepared(
    db,
    `${MESSAGE} JOIN mentions x ON x.message_id = m.message_id
    WHERE x.name = @name AND ${VISIBLE} AND m.from_key <> @key ORDER BY m.message_id DESC LIMIT @limit`,
  ).all({ ...vis(v), name: v.name, limit });
  return withReactions(db, rows);
}

/** Unread system messages in visible channels, newest first, with their total. */
export function systemNotifications(db: Database, v: Viewer, limit: number): { messages: MessageRow[]; total: number } {
  const where = `WHERE m.kind = 'system' AND ${VISIBLE} AND ${UNREAD}`;
  const rows = prepared(db, `${MESSAGE} ${where} ORDER BY m.message_id DESC LIMIT @limit`).all({ ...vis(v), limit });
  const total = (
    prepared(db, `SELECT count(*) AS n FROM messages m JOIN channels c ON c.channel_id = m.channel_id ${where}`).get(
      vis(v),
    ) as { n: number }
  ).n;
  return { messages: withReactions(db, rows), total };
}

export interface SearchFilter {
  minPriority: number;
  fromName: string | null;
  channelId: number | null;
  limit: number;
}

/** Full-text search (FTS5, best match first) over the messages the viewer can see. */
export function searchMessages(db: Database, v: Viewer, query: string, f: SearchFilter): MessageRow[] {
  const rows = prepared(
    db,
    `${MESSAGE} JOIN message_fts f ON f.rowid = m.message_id
    WHERE f.message_fts MATCH @match AND ${VISIBLE} AND m.priority >= @min AND (@from IS NULL OR m.from_name = @from)
      AND (@channel IS NULL OR m.channel_id = @channel)
    ORDER BY f.rank, m.message_id DESC LIMIT @limit`,
  ).all({
    ...vis(v),
    match: ftsQuery(query),
    min: f.minPriority,
    from: f.fromName,
    channel: f.channelId,
    limit: f.limit,
  });
  return withReactions(db, rows);
}

/** Every word quoted (so FTS syntax in user text is literal), all of them required. */
export const ftsQuery = (query: string): string =>
  query
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => `"${w.replaceAll('"', '""')}"`)
    .join(' ');

export const getMessage = (db: Database, messageId: number): MessageRow | null => {
  const row = prepared(db, `${MESSAGE} WHERE m.message_id = ?`).get(messageId);
  return row ? withReactions(db, [row])[0]! : null;
};

/**
 * What the channel decider needs to know about one message (commands/channels.ts): its channel and the
 * reactions on it, by principal key. Read inside the command's transaction, so it is the committed truth.
 */
export const messageFacts = (db: Database, messageId: number): { channelId: number; held: HeldReaction[] } | null =>
  applySteps(db, readMessageFacts(messageId));
export function* readMessageFacts(messageId: number): Steps<{ channelId: number; held: HeldReaction[] } | null> {
  const row = yield* get<{ channelId: number }>(
    'SELECT channel_id AS "channelId" FROM messages WHERE message_id = ?',
    messageId,
  );
  if (!row) return null;
  const held = yield* all<HeldReaction>(
    'SELECT reaction, by_key AS "by", by_name AS "byName" FROM reactions WHERE message_id = ? ORDER BY created_at, reaction, by_key',
    messageId,
  );
  return { channelId: row.channelId, held };
}

function withReactions(db: Database, rows: unknown[]): MessageRow[] {
  const get = prepared(
    db,
    'SELECT reaction, by_name AS "by" FROM reactions WHERE message_id = ? ORDER BY created_at, reaction, by_key',
  );
  return (rows as (Omit<MessageRow, 'metadata' | 'reactions'> & { metadata: string | null })[]).map((r) => ({
    ...r,
    metadata: r.metadata ? (JSON.parse(r.metadata) as Record<string, unknown>) : null,
    reactions: get.all(r.messageId) as MessageRow['reactions'],
  }));
}
