import { join } from 'node:path';
import { Engine } from '../src/engine/engine.js';
import { SqliteEventStore } from '../src/engine/sqlite-store.js';
import { appendToStream } from '../src/engine/store.js';
import { figure, median, type Figure } from './util.js';

/**
 * What the store port's async shape costs on SQLite: the same appends (one event, with an idempotency key,
 * on 100 streams) through `SqliteEventStore.append`, awaited one after another, against the engine's
 * synchronous `transact` + `appendToStream` on a twin database, NORMAL durability. Rounds alternate.
 */
export async function benchStorePort(dir: string, n: number, rounds: number): Promise<Figure> {
  const direct = Engine.open({ file: join(dir, 'port-direct.db'), durability: 'normal' });
  const port = new SqliteEventStore(Engine.open({ file: join(dir, 'port-async.db'), durability: 'normal' }), 'bench');
  const rates = { direct: [] as number[], port: [] as number[] };
  const event = (i: number) => [{ type: 'TaskNoted', data: { i, text: 'a note of about the size an agent writes' } }];
  let seq = 0;
  try {
    const viaEngine = () => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++, seq++) {
        direct.transact({ actor: 'bench', commandId: `c-${seq}` }, (uow) => {
          const stored = appendToStream(direct.db, `task-${seq % 100}`, 'any', event(seq), uow.meta, uow.now);
          direct.projections.apply(direct.db, stored);
          uow.appended.push(...stored);
        });
      }
      rates.direct.push(n / ((performance.now() - t0) / 1000));
    };
    const viaPort = async () => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++, seq++)
        await port.append({
          tenant: 'bench',
          streamId: `task-${seq % 100}`,
          expected: 'any',
          events: event(seq),
          actor: 'bench',
          commandId: `c-${seq}`,
        });
      rates.port.push(n / ((performance.now() - t0) / 1000));
    };
    // Alternate which goes first, so warm-up and the garbage one leaves behind fall on both alike.
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        viaEngine();
        await viaPort();
      } else {
        await viaPort();
        viaEngine();
      }
    }
  } finally {
    direct.close();
    await port.close();
  }
  return figure(median(rates.port), 'commands/s', median(rates.direct));
}
