import { createOwner } from '../src/actions/principals.js';
import { openApp, type App } from '../src/app.js';
import type { PgPrimary } from '../src/engine/pg/primary.js';
import { tempDir } from '../testkit/temp-dir.js';
import { figure, type Figure } from './util.js';
import { plainAgent } from '../testkit/agents.js';
import { dropStoreSchemas } from '../testkit/pg-schemas.js';

/**
 * How long a node holds its tenant's chain lock per write (engine/replica.ts), timed in the primary's worker:
 * - pg_lock_held_ms: a write decided on the copy and sent in one round trip (pg/one-trip.ts) — the whole
 *   round trip, an upper bound of the time PostgreSQL holds the lock inside it;
 * - its baseline, in the same run: the same writes taking the lock first (a grouped caller that is not
 *   retryable, as every write was before), held from the lock's request to COMMIT's answer.
 * One node, one grouped caller at a time, each registering an agent (several events and read-model rows).
 */
export async function benchPgLock(
  url: string,
  writes: number,
  say: (s: string) => void,
): Promise<Record<string, Figure>> {
  const schema = `bench_lock_${process.pid}`;
  const dir = tempDir();
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  const app = openApp({ dataDir: dir.dir, durability: 'normal', store: { url: u.toString(), tenant: 'lock' } });
  try {
    const ownerId = createOwner(app, 'owner', { actor: 'user:owner' }).userId;
    const primary = app.engine.replica!.primary as PgPrimary;
    let n = 0;
    const held = async (retry: boolean): Promise<number> => {
      const before = primary.stats();
      for (let i = 0; i < writes; i++) await app.engine.group.run(() => agent(app, ownerId, `agent-${n++}`), { retry });
      const after = primary.stats();
      return (after.heldMs - before.heldMs) / (after.writes - before.writes);
    };
    await held(true); // warm-up: statements parsed, pages cached
    const pessimistic = await held(false);
    const optimistic = await held(true);
    say(
      `  lock held per write: ${optimistic.toFixed(2)} ms in one round trip, ${pessimistic.toFixed(2)} ms lock first`,
    );
    return {
      pg_lock_held_ms: { ...figure(optimistic, 'ms', pessimistic), data: `${writes} agent registrations each` },
    };
  } finally {
    app.engine.close();
    dir.cleanup();
    await dropStoreSchemas(url, schema);
  }
}

const agent = (app: App, ownerId: number, name: string) => plainAgent(app, ownerId, name, { actor: 'user:owner' });
