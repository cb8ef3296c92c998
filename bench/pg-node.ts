import { createInterface } from 'node:readline';
import { PgEventStore } from '../src/engine/pg/store.js';

/**
 * One node of the PostgreSQL benchmark (bench/pg.ts): `workers` concurrent callers, each issuing one
 * command after another (one event, with an idempotency key, as a tool call's command has), for
 * `seconds` after the parent's "go". Worker w appends to tenant `<tenantPrefix>-<w mod tenants>`.
 * Prints "ready", then one JSON line {"commands": n}.
 */
const [url, node, workersArg, secondsArg, tenantPrefix, tenantsArg] = process.argv.slice(2) as string[];
const workers = Number(workersArg);
const tenants = Number(tenantsArg);
const store = await PgEventStore.open(url!, { poolSize: workers });
// Warm the pool and the tenants' chains before the clock starts.
await Promise.all(
  Array.from({ length: workers }, (_, w) =>
    store.append({
      tenant: `${tenantPrefix}-${w % tenants}`,
      streamId: 'warm-1',
      expected: 'any',
      events: [{ type: 'Warm', data: {} }],
      actor: 'bench',
    }),
  ),
);
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
lines.close();
process.stdin.destroy(); // or it would keep this process alive after its answer
const end = Date.now() + Number(secondsArg) * 1000;
let commands = 0;
await Promise.all(
  Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; Date.now() < end; i++) {
      await store.append({
        tenant: `${tenantPrefix}-${w % tenants}`,
        streamId: `task-${i % 100}`,
        expected: 'any',
        events: [{ type: 'TaskNoted', data: { i, text: 'a note of about the size an agent writes' } }],
        actor: `agent-${w}`,
        commandId: `${node}-${w}-${i}`,
      });
      commands += 1;
    }
  }),
);
process.stdout.write(`${JSON.stringify({ commands })}\n`);
await store.close();
