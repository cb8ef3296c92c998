import { spawnSync } from 'node:child_process';
import { createPublicChannel } from '../src/actions/channels.js';
import { openApp } from '../src/app.js';
import { seedFiller, seedMessages } from './flat-data.js';
import { createTeam, progress, seedGoal } from './goal-data.js';
import { COLONY_BIN } from './mcp-ext.js';

/**
 * The tenants of the node start-up benchmark (bench/pg-start.ts): a SQLite data dir whose log is a busy
 * team's — real goals of 1,000 tasks worked by ten agents, channel history, filler comments (as
 * flat-data.ts's seedBigLog) — moved to a PostgreSQL tenant by `colony migrate --to`, as an operator
 * would. Its commands stay under migrate's batch of 5,000 rows: migrate refuses a batch that splits one.
 */
export function seedSqliteLog(dataDir: string, total: number): void {
  const app = openApp({ dataDir, durability: 'normal' });
  try {
    const team = createTeam(app, 10, ['send_message', 'claim_task', 'complete_task']);
    for (let g = 0; g < Math.max(1, Math.round(total / 100_000)); g++) {
      const { leaves } = seedGoal(app, team.owner, 900 + g);
      progress(app, team, leaves, leaves.length, 0);
    }
    const authors = [team.owner, ...team.agents.map((a) => a.speaker)];
    const channels = 20;
    for (let c = 0; c < channels; c++) {
      const channelId = createPublicChannel(app, team.owner.tenant, `history-${c}`, 'Old conversations.', {
        actor: 'user:owner',
      });
      seedMessages(app, channelId, authors, Math.floor((0.3 * total) / channels));
    }
    // Filler in commands of 5,000 rows (ten-event card streams, so a command never splits a stream's turn).
    for (let card = 1; app.engine.head().position < total; card += 500)
      seedFiller(app.engine, Math.min(5000, total - app.engine.head().position), card);
  } finally {
    app.engine.close();
  }
}

/** `colony migrate --to <url> --tenant <tenant>` on the data dir, in a process of its own. */
export function migrateTo(dataDir: string, url: string, tenant: string): void {
  const r = spawnSync(
    process.execPath,
    [COLONY_BIN, 'migrate', '--data', dataDir, '--to', url, '--tenant', tenant, '--json'],
    { encoding: 'utf8', env: { ...process.env, COLONY_DATA: '' }, timeout: 600_000 },
  );
  if (r.status !== 0) throw new Error(`colony migrate failed (${r.status}): ${r.stderr}`);
}
