import type { Database } from 'better-sqlite3';
import { PAYLOAD_TEXT } from './util.js';

/**
 * The same workload as CardWorkload.step(), written as the bare SQL it needs and nothing else: read the
 * stream, read the head, insert the event rows, update the two read tables and the positions — no
 * decide, no JSON parsing or canonical form, no hashing (a fixed string stands in), no idempotency.
 * It runs on a database the engine seeded, so tables, indexes and sizes are the same. What the engine
 * adds on top of this floor is its own cost; the rest is what SQLite charges for the writes themselves.
 */
export class SqlFloor {
  private readonly open: number[];
  private readonly tx;
  private nextCard: number;

  constructor(
    private readonly db: Database,
    private readonly random: () => number,
  ) {
    this.open = db
      .prepare(`SELECT card_id FROM cards WHERE status = 'open' ORDER BY card_id`)
      .pluck()
      .all() as number[];
    this.nextCard = (db.prepare('SELECT MAX(card_id) FROM cards').pluck().get() as number) + 1;
    const s = {
      stream: db.prepare(
        'SELECT version, type, schema_version, data FROM es_events WHERE stream_id = ? ORDER BY version',
      ),
      head: db.prepare('SELECT position, hash FROM es_events ORDER BY position DESC LIMIT 1'),
      insert: db.prepare('INSERT INTO es_events VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?)'),
      comment: db.prepare(
        'UPDATE cards SET comments = comments + 1, updated_at = ?, last_position = ? WHERE card_id = ?',
      ),
      openCard: db.prepare(`INSERT INTO cards VALUES (?, ?, 'todo', 'normal', 'open', 0, ?, ?)`),
      close: db.prepare(
        `UPDATE cards SET status = 'closed', column_name = 'done', updated_at = ?, last_position = ? WHERE card_id = ?`,
      ),
      bump: db.prepare(`INSERT INTO card_columns VALUES (?, ?, ?) ON CONFLICT(column_name) DO UPDATE SET
        open_cards = open_cards + excluded.open_cards, closed_cards = closed_cards + excluded.closed_cards`),
      positions: db.prepare(
        `UPDATE es_projections SET position = ? WHERE position = ? AND name IN ('$log', 'cards', 'card_columns')`,
      ),
      sequence: db.prepare(`UPDATE es_sequences SET value = ? WHERE name = 'card'`),
    };
    const meta = '{"actor":"bench","causationId":null,"commandId":"0","correlationId":null}';
    const hash = 'f'.repeat(64);
    const now = new Date().toISOString();
    this.tx = db.transaction((kind: 'comment' | 'open' | 'finish', card: number) => {
      const version = (s.stream.all(`card-${card}`) as unknown[]).length;
      const head = (s.head.get() as { position: number }).position;
      const append = (i: number, type: string, data: string) =>
        s.insert.run(head + i, `card-${card}`, version + i, type, data, meta, now, hash, hash);
      if (kind === 'comment') {
        append(1, 'CardCommented', JSON.stringify({ cardId: card, text: PAYLOAD_TEXT }));
        s.comment.run(now, head + 1, card);
      } else if (kind === 'open') {
        append(
          1,
          'CardOpened',
          JSON.stringify({ cardId: card, title: `Card ${card}`, column: 'todo', priority: 'normal' }),
        );
        s.openCard.run(card, `Card ${card}`, now, head + 1);
        s.bump.run('todo', 1, 0);
        s.sequence.run(card);
      } else {
        append(1, 'CardMoved', JSON.stringify({ cardId: card, from: 'todo', to: 'done' }));
        append(2, 'CardClosed', JSON.stringify({ cardId: card, column: 'done', reason: 'done' }));
        s.close.run(now, head + 2, card);
        s.bump.run('todo', -1, 0);
        s.bump.run('done', 0, 1);
      }
      s.positions.run(head + (kind === 'finish' ? 2 : 1), head);
    }).immediate;
  }

  /** One command, with the same mix as CardWorkload.step(): 80 % comment, 10 % finish, 10 % open. */
  step(): void {
    const r = this.random();
    if (r < 0.1 || this.open.length === 0) {
      const card = this.nextCard++;
      this.tx('open', card);
      this.open.push(card);
      return;
    }
    const i = Math.floor(this.random() * this.open.length);
    const card = this.open[i]!;
    if (r < 0.2) {
      this.tx('finish', card);
      this.open[i] = this.open[this.open.length - 1]!;
      this.open.pop();
    } else {
      this.tx('comment', card);
    }
  }
}
