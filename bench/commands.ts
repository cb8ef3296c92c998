import { join } from 'node:path';
import { openDatabase, type Durability } from '../src/engine/db.js';
import { Engine } from '../src/engine/engine.js';
import { cardProjections } from '../testkit/card-projections.js';
import { figure, median, PAYLOAD_TEXT, prng, seconds, type Figure } from './util.js';
import { SqlFloor } from './sql-floor.js';
import { CardWorkload } from './workload.js';

/**
 * Commands per second against raw better-sqlite3 single-row BEGIN IMMEDIATE transactions in the same
 * durability mode, on the same disk — and against the SQL floor of the same workload (bench/sql-floor.ts),
 * which tells the engine's own overhead apart from what SQLite charges for the writes. Rounds alternate
 * so drift hits all three alike; medians count.
 */
export function benchCommands(
  dir: string,
  durability: Durability,
  n: number,
  rounds: number,
): { vsRaw: Figure; vsFloor: Figure } {
  const raw = new RawInserts(join(dir, `raw-${durability}.db`), durability);
  const engine = seededEngine(join(dir, `engine-${durability}.db`), durability, n);
  const floorEngine = seededEngine(join(dir, `floor-${durability}.db`), durability, n);
  const workload = new CardWorkload(engine, prng(42));
  const floor = new SqlFloor(floorEngine.db, prng(42));
  const rates = { raw: [] as number[], engine: [] as number[], floor: [] as number[] };
  try {
    for (let r = 0; r < rounds; r++) {
      rates.raw.push(n / seconds(() => raw.insert(n)));
      rates.engine.push(
        n /
          seconds(() => {
            for (let i = 0; i < n; i++) workload.step();
          }),
      );
      rates.floor.push(
        n /
          seconds(() => {
            for (let i = 0; i < n; i++) floor.step();
          }),
      );
    }
  } finally {
    engine.close();
    floorEngine.close();
    raw.close();
  }
  return {
    vsRaw: figure(median(rates.engine), 'commands/s', median(rates.raw)),
    vsFloor: figure(median(rates.engine), 'commands/s', median(rates.floor)),
  };
}

/** An engine on a fresh file with cards whose streams hold about ten events. */
export function seededEngine(file: string, durability: Durability, n: number): Engine {
  const engine = Engine.open({ file, durability, projections: cardProjections });
  new CardWorkload(engine, prng(1)).seed(Math.max(200, Math.floor(n / 2)), 8);
  return engine;
}

export class RawInserts {
  private readonly db;
  private next = 0;
  private readonly tx;

  constructor(file: string, durability: Durability) {
    this.db = openDatabase(file, { durability });
    this.db
      .exec(`CREATE TABLE raw_events (position INTEGER PRIMARY KEY, stream_id TEXT NOT NULL, version INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, UNIQUE (stream_id, version))`);
    const insert = this.db.prepare('INSERT INTO raw_events VALUES (?, ?, ?, ?, ?)');
    const data = JSON.stringify({ cardId: 0, text: PAYLOAD_TEXT });
    this.tx = this.db.transaction((i: number) =>
      insert.run(i, `card-${i % 1000}`, Math.floor(i / 1000) + 1, 'CardCommented', data),
    );
  }

  insert(n: number): void {
    for (let i = 0; i < n; i++) this.tx.immediate(++this.next);
  }

  close(): void {
    this.db.close();
  }
}
