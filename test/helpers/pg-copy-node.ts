import { plainAgent } from '../../testkit/agents.js';
import { openApp } from '../../src/app.js';

/**
 * A node writing through its copy of a PostgreSQL tenant (engine/replica.ts), for the tests of writes
 * decided on the copy (test/engine/pg/one-trip.test.ts):
 *
 *   <store url> <tenant> <data dir> <node> <owner id>
 *     Registers agents named `<node>-<i>`, four at a time as grouped callers (as MCP calls are), until it
 *     is killed; prints `wrote <i>` after each group committed.
 */
const [url, tenant, dataDir, node, ownerId] = process.argv.slice(2) as [string, string, string, string, string];
const app = openApp({ dataDir, durability: 'normal', store: { url, tenant } });
const agent = (name: string) => plainAgent(app, Number(ownerId), name);
for (let i = 0; ; i += 4) {
  const names = [0, 1, 2, 3].map((k) => `${node}-${i + k}`);
  await Promise.all(names.map((n) => app.engine.group.run(() => agent(n), { retry: true })));
  process.stdout.write(`wrote ${i + 4}\n`);
}
