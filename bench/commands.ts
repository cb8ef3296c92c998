import { join } from 'node:path';
import { openDatabase, type Durability } from '../src/db.js';
import { Engine } from '../src/engine.js';
import { cardProjections } from '../test/helpers/card-projections.js';
import { figure, median, PAYLOAD_TEXT, prng, seconds, type Figure } from './util.js';
import { CardWorkload } from './workload.js';

/**
 * Commands per second against the floor SQLite sets: raw better-sqlite3 single-row BEGIN IMMEDIATE
 * transactions in the same durability mode, on the same disk, alternating rounds so drift hits both.
 */
export function benchCommands(dir: string, durability: Durability, n: number, rounds: number): Figure {
  const raw = new RawInserts(join(dir, `raw-${durability}.db`), durability);
  const engine = Engine.open({ file: join(dir, `engine-${durability}.db`), durability, projections: cardProjections });
  const workload = new CardWorkload(engine, prng(42));
  workload.seed(Math.max(200, Math.floor(n / 2)), 8);
  const rawRates: number[] = [];
  const engineRates: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      rawRates.push(n / seconds(() => raw.insert(n)));
      engineRates.push(n / seconds(() => { for (let i = 0; i < n; i++) workload.step(); }));
    }
  } finally {
    engine.close();
    raw.close();
  }
  return figure(median(engineRates), 'commands/s', median(rawRates));
}

class RawInserts {
  private readonly db;
  private next = 0;
  private readonly tx;

  constructor(file: string, durability: Durability) {
    this.db = openDatabase(file, { durability });
    this.db.exec(`CREATE TABLE raw_events (position INTEGER PRIMARY KEY, stream_id TEXT NOT NULL, version INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, UNIQUE (stream_id, version))`);
    const insert = this.db.prepare('INSERT INTO raw_events VALUES (?, ?, ?, ?, ?)');
    const data = JSON.stringify({ cardId: 0, text: PAYLOAD_TEXT });
    this.tx = this.db.transaction((i: number) => insert.run(i, `card-${i % 1000}`, Math.floor(i / 1000) + 1, 'CardCommented', data));
  }

  insert(n: number): void {
    for (let i = 0; i < n; i++) this.tx.immediate(++this.next);
  }

  close(): void {
    this.db.close();
  }
}
