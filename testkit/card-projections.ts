import type { Database } from 'better-sqlite3';
import { prepared } from '../src/engine/db.js';
import { sqlFor, type Projection } from '../src/engine/projection.js';
import { run } from '../src/engine/projection-sql.js';
import type { CardEvent } from './cards.js';

const cardsSql = sqlFor((t: { cards: string }) => {
  const touch = (set: string) => `UPDATE "${t.cards}" SET ${set}, updated_at = ?, last_position = ? WHERE card_id = ?`;
  return {
    open: `INSERT OR IGNORE INTO "${t.cards}" VALUES (?, ?, ?, ?, 'open', 0, ?, ?)`,
    move: touch('column_name = ?'),
    comment: touch('comments = comments + 1'),
    close: touch(`status = 'closed', column_name = ?`),
  };
});

const columnsSql = sqlFor((t: { card_columns: string }) => ({
  bump: `INSERT INTO "${t.card_columns}" VALUES (?, ?, ?) ON CONFLICT(column_name) DO UPDATE SET
    open_cards = "${t.card_columns}".open_cards + excluded.open_cards,
    closed_cards = "${t.card_columns}".closed_cards + excluded.closed_cards`,
}));

/** The test domain's two read models: one row per card, and counts per column. */
export const cardsProjection: Projection<CardEvent, 'cards'> = {
  name: 'cards',
  version: 1,
  handles: ['CardOpened', 'CardMoved', 'CardCommented', 'CardClosed'],
  tables: ['cards'],
  init(t) {
    return `CREATE TABLE IF NOT EXISTS "${t.cards}" (
      card_id INTEGER PRIMARY KEY, title TEXT NOT NULL, column_name TEXT NOT NULL, priority TEXT NOT NULL,
      status TEXT NOT NULL, comments INTEGER NOT NULL, updated_at TEXT NOT NULL, last_position INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS "${t.cards}_by_column" ON "${t.cards}" (column_name, status);`;
  },
  *apply(e, t) {
    const sql = cardsSql(t);
    switch (e.type) {
      case 'CardOpened':
        yield run(sql.open, e.data.cardId, e.data.title, e.data.column, e.data.priority, e.recordedAt, e.position);
        return;
      case 'CardMoved':
        yield run(sql.move, e.data.to, e.recordedAt, e.position, e.data.cardId);
        return;
      case 'CardCommented':
        yield run(sql.comment, e.recordedAt, e.position, e.data.cardId);
        return;
      case 'CardClosed':
        yield run(sql.close, e.data.column, e.recordedAt, e.position, e.data.cardId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export const cardColumnsProjection: Projection<CardEvent, 'card_columns'> = {
  name: 'card_columns',
  version: 1,
  handles: ['CardOpened', 'CardMoved', 'CardClosed'],
  tables: ['card_columns'],
  init(t) {
    return `CREATE TABLE IF NOT EXISTS "${t.card_columns}" (
      column_name TEXT PRIMARY KEY, open_cards INTEGER NOT NULL, closed_cards INTEGER NOT NULL)`;
  },
  *apply(e, t) {
    const bump = (column: string, open: number, closed: number) => run(columnsSql(t).bump, column, open, closed);
    switch (e.type) {
      case 'CardOpened':
        yield bump(e.data.column, 1, 0);
        return;
      case 'CardMoved':
        yield bump(e.data.from, -1, 0);
        yield bump(e.data.to, 1, 0);
        return;
      case 'CardClosed':
        yield bump(e.data.column, -1, 1);
        return;
      case 'CardCommented':
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export const cardProjections = [cardsProjection, cardColumnsProjection];

export interface CardRow {
  card_id: number;
  title: string;
  column_name: string;
  priority: string;
  status: string;
  comments: number;
  updated_at: string;
  last_position: number;
}

export const getCard = (db: Database, cardId: number): CardRow | null =>
  (prepared(db, 'SELECT * FROM cards WHERE card_id = ?').get(cardId) as CardRow | undefined) ?? null;

export const listCards = (db: Database): CardRow[] =>
  prepared(db, 'SELECT * FROM cards ORDER BY card_id').all() as CardRow[];

export const columnCounts = (db: Database): { column_name: string; open_cards: number; closed_cards: number }[] =>
  prepared(db, 'SELECT * FROM card_columns ORDER BY column_name').all() as never;
