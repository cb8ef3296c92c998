import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { openDatabase } from '../../src/engine/db.js';
import { fixedClock } from '../../src/clock.js';
import { Engine, type EngineOptions } from '../../src/engine/engine.js';
import { streamsProjection } from '../../src/projections/streams.js';
import { cardProjections } from '../../testkit/card-projections.js';
import { cardDecider, cardStream, type CardCommand } from '../../testkit/cards.js';
import { tempDir } from '../../testkit/temp-dir.js';

export const TEST_PROJECTIONS = [...cardProjections, streamsProjection];

/** An engine on a fresh database with the test domain's projections and a clock that ticks 1 s per reading. */
export function testEngine(options: Partial<EngineOptions> = {}): Engine {
  return Engine.open({
    file: ':memory:',
    clock: fixedClock('2026-01-01T00:00:00.000Z', 1000),
    projections: TEST_PROJECTIONS,
    ...options,
  });
}

/**
 * An engine on a fresh file and a second connection on the same file: the witness of what is committed
 * (what another process would see). `close` closes both and removes the file.
 */
export function witnessedEngine(options: Omit<EngineOptions, 'file'>): {
  engine: Engine;
  witness: Database;
  close: () => void;
} {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'colony.db');
  const engine = Engine.open({ file, ...options });
  const witness = openDatabase(file);
  const close = () => {
    witness.close();
    engine.close();
    cleanup();
  };
  return { engine, witness, close };
}

/** Opens a card with a freshly allocated id, the way a real creation command names its new stream. */
export function openCard(engine: Engine, title: string, column = 'todo', commandId?: string): number {
  const result = engine.transact({ actor: 'tester', commandId }, (uow) => {
    const cardId = uow.ids.next('card');
    engine.handle(cardDecider, cardStream(cardId), { type: 'OpenCard', cardId, title, column }, { actor: 'tester' });
    return cardId;
  });
  return result.value ?? (result.events[0]!.data as { cardId: number }).cardId;
}

export function runCard(engine: Engine, cardId: number, command: CardCommand, commandId?: string) {
  return engine.handle(cardDecider, cardStream(cardId), command, { actor: 'tester', commandId });
}

/** Every row of the given tables, ordered, for comparing incremental and rebuilt read models. */
export function dumpTables(db: Database, tables: readonly string[]): Record<string, unknown[]> {
  return Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}" ORDER BY 1`).all()]));
}

export const PROJECTED_TABLES = TEST_PROJECTIONS.flatMap((p) => p.tables as readonly string[]);
