import { MENTION, type ChannelEvent } from '../events/channels.js';
import type { Event, StoredEvent } from '../engine/event.js';
import { NOTICE_EVENT_TYPES, type Notice } from '../events/notices.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { later, run, type RunResult } from '../engine/projection-sql.js';

/**
 * Channels and messages as read tables, with `@name` mentions parsed out of each body and an FTS5
 * index for search_messages (its rowid is the message id). The FTS table is named from `t` like the
 * others, so a rebuild fills a shadow index and renames it in (FTS5 renames its own internal tables).
 * Queries live in channel-queries.ts.
 *
 * Goal and task transitions carry their goal-channel notice; this projection is what turns
 * each notice into a system message, so the message exists exactly when the transition does.
 */
type NoticeEvent = Event<(typeof NOTICE_EVENT_TYPES)[number], { notice: Notice | null }>;
export type T = 'channels' | 'messages' | 'mentions' | 'reactions' | 'read_markers' | 'message_fts';

const sql = sqlFor((t: Record<T, string>) => ({
  channel: `INSERT OR IGNORE INTO "${t.channels}" (channel_id, owner_id, name, kind, member_a, member_b, description, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  message: `INSERT OR IGNORE INTO "${t.messages}" (message_id, channel_id, kind, from_key, from_name, body, subject, priority, metadata,
    reply_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  mention: `INSERT OR IGNORE INTO "${t.mentions}" (message_id, name) VALUES (?, ?)`,
  fts: {
    sqlite: `INSERT OR REPLACE INTO "${t.message_fts}" (rowid, body, subject) VALUES (?, ?, ?)`,
    postgres: `INSERT INTO "${t.message_fts}" (rowid, body, subject) VALUES (?, ?, ?)
      ON CONFLICT (rowid) DO UPDATE SET body = excluded.body, subject = excluded.subject`,
  },
  react: `INSERT OR IGNORE INTO "${t.reactions}" (message_id, reaction, by_key, by_name, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  unreact: `DELETE FROM "${t.reactions}" WHERE message_id = ? AND reaction = ? AND by_key = ?`,
  read: `INSERT INTO "${t.read_markers}" (channel_id, principal, last_read_id, read_at) VALUES (?, ?, ?, ?)
    ON CONFLICT(channel_id, principal) DO UPDATE SET last_read_id = max("${t.read_markers}".last_read_id, excluded.last_read_id), read_at = excluded.read_at`,
}));

// Message search per dialect: FTS5 on SQLite; on PostgreSQL a tsvector kept by the table itself, under a
// GIN index. 'simple' (no stemming, lower-cased words) matches FTS5's unicode61 tokenizer most closely.
const ftsSqlite = (table: string) =>
  `CREATE VIRTUAL TABLE IF NOT EXISTS "${table}" USING fts5(body, subject, tokenize = 'unicode61');`;
const ftsPostgres = (
  table: string,
) => `CREATE TABLE IF NOT EXISTS "${table}" (rowid BIGINT PRIMARY KEY, body TEXT, subject TEXT,
    words tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(body, '') || ' ' || coalesce(subject, ''))) STORED);
  CREATE INDEX IF NOT EXISTS "${table}_words" ON "${table}" USING gin (words);`;

export const channelsProjection: Projection<ChannelEvent | NoticeEvent, T> = {
  name: 'channels',
  version: 4,
  handles: [
    'ChannelCreated',
    'MessagePosted',
    'ReactionAdded',
    'ReactionRemoved',
    'MessagesRead',
    ...NOTICE_EVENT_TYPES,
  ],
  tables: ['channels', 'messages', 'mentions', 'reactions', 'read_markers', 'message_fts'],
  init(t, dialect) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.channels}" (
        channel_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
        member_a TEXT, member_b TEXT, description TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS "${t.channels}_by_owner_name" ON "${t.channels}" (owner_id, name);
      CREATE TABLE IF NOT EXISTS "${t.messages}" (
        message_id INTEGER PRIMARY KEY, channel_id INTEGER NOT NULL, kind TEXT NOT NULL, from_key TEXT NOT NULL,
        from_name TEXT NOT NULL, body TEXT NOT NULL, subject TEXT, priority INTEGER NOT NULL, metadata TEXT,
        reply_to INTEGER, created_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS "${t.messages}_by_channel" ON "${t.messages}" (channel_id, message_id);
      CREATE TABLE IF NOT EXISTS "${t.mentions}" (message_id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY (name, message_id)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS "${t.reactions}" (
        message_id INTEGER NOT NULL, reaction TEXT NOT NULL, by_key TEXT NOT NULL, by_name TEXT NOT NULL, metadata TEXT,
        created_at TEXT NOT NULL, PRIMARY KEY (message_id, reaction, by_key)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS "${t.read_markers}" (
        channel_id INTEGER NOT NULL, principal TEXT NOT NULL, last_read_id INTEGER NOT NULL, read_at TEXT NOT NULL,
        PRIMARY KEY (channel_id, principal)) WITHOUT ROWID;
      ${dialect === 'sqlite' ? ftsSqlite(t.message_fts) : ftsPostgres(t.message_fts)}
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    if (isNotice(e)) {
      const n = e.data.notice;
      if (!n) return;
      const inserted: RunResult = yield run(
        q.message,
        n.messageId,
        n.channelId,
        'system',
        'system',
        'system',
        n.body,
        null,
        5,
        JSON.stringify(n.metadata),
        null,
        e.recordedAt,
      );
      if (inserted.changes > 0) yield later(q.fts, n.messageId, n.body, '');
      return;
    }
    switch (e.type) {
      case 'ChannelCreated': {
        const c = e.data;
        yield run(
          q.channel,
          c.channelId,
          c.ownerId,
          c.name,
          c.kind,
          c.members[0] ?? null,
          c.members[1] ?? null,
          c.description,
          e.recordedAt,
        );
        return;
      }
      case 'MessagePosted': {
        const m = e.data;
        const inserted: RunResult = yield run(
          q.message,
          m.messageId,
          m.channelId,
          m.kind,
          m.from,
          m.fromName,
          m.body,
          m.subject,
          m.priority,
          m.metadata ? JSON.stringify(m.metadata) : null,
          m.replyTo,
          e.recordedAt,
        );
        if (inserted.changes === 0) return;
        yield later(q.fts, m.messageId, m.body, m.subject ?? '');
        for (const name of mentionsIn(m.body)) yield run(q.mention, m.messageId, name);
        return;
      }
      case 'ReactionAdded': {
        const r = e.data;
        yield run(
          q.react,
          r.messageId,
          r.reaction,
          r.by,
          r.byName,
          r.metadata ? JSON.stringify(r.metadata) : null,
          e.recordedAt,
        );
        return;
      }
      case 'ReactionRemoved':
        yield run(q.unreact, e.data.messageId, e.data.reaction, e.data.by);
        return;
      case 'MessagesRead':
        yield run(q.read, Number(e.streamId.slice('channel-'.length)), e.data.principal, e.data.upTo, e.recordedAt);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

const NOTICES: ReadonlySet<string> = new Set(NOTICE_EVENT_TYPES);
const isNotice = (e: StoredEvent<ChannelEvent | NoticeEvent>): e is StoredEvent<NoticeEvent> => NOTICES.has(e.type);

/** The distinct names `@name` mentions in a body. */
export function mentionsIn(body: string): string[] {
  return [...new Set([...body.matchAll(MENTION)].map((m) => m[1]!))];
}
