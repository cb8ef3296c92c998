import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { createOwner, registerAgent } from '../src/actions/principals.js';
import { reputationOf } from '../src/actions/reputation.js';
import { openApp } from '../src/app.js';
import { reputationDecider } from '../src/commands/reputation.js';
import { agentStream } from '../src/events/principals.js';
import { getAgent } from '../src/projections/principal-queries.js';
import { alternateMs, latencyFigures, type Figure } from './util.js';

/**
 * reputation_read_ms: the rolling score of an agent whose config hash has 10,000 evidence rows over
 * 4 domains and 90 days (reputationOf: every domain's decayed sum, the mean, counts, last evidence — what
 * GET /api/agents/:id/reputation and `colony agents show` compute at read time). The rows are appended by
 * the reputation decider's RecordEvidence command, 1,000 per transaction. Baseline: a raw better-sqlite3
 * `SELECT delta, weight, at` of the same rows on the same connection.
 */
export async function benchReputation(dir: string, rows: number, runs: number): Promise<Record<string, Figure>> {
  const data = join(dir, 'reputation');
  mkdirSync(data, { recursive: true });
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  const app = openApp({ dataDir: data, durability: 'normal', clock: () => new Date(now) });
  try {
    const { userId } = createOwner(app, 'owner', { actor: 'system' });
    const { agentId } = registerAgent(
      app,
      {
        name: 'veteran',
        ownerId: userId,
        model: 'bench-model',
        systemPrompt: 'You review pull requests with care.',
        toolScope: ['verify_task'],
        tier: 'assisted',
        command: null,
        parentId: null,
        spawnDepth: 0,
      },
      { actor: 'user:owner' },
    );
    const agent = getAgent(app.engine.db, agentId)!;
    const domains = ['backend', 'frontend', 'docs', 'default'];
    const step = (90 * 86_400_000) / rows;
    for (let from = 0; from < rows; from += 1000) {
      app.engine.transact({ actor: 'system' }, () => {
        for (let i = from; i < Math.min(rows, from + 1000); i++) {
          now += step;
          app.engine.handle(
            reputationDecider,
            agentStream(agentId),
            {
              type: 'RecordEvidence',
              evidence: {
                agentId,
                ownerId: userId,
                configHash: agent.configHash,
                domain: domains[i % domains.length]!,
                delta: i % 7 === 0 ? -0.02 : 0.01,
                weight: 1,
                ref: `task:${i}`,
              },
              // Load only the evidence rows: no domain record is seeded (the count below expects just the root seed).
              record: { started: true, parent: null },
            },
            { actor: 'system' },
          );
        }
      });
    }
    const raw = app.engine.db.prepare('SELECT delta, weight, at FROM evidence WHERE owner_id = ? AND config_hash = ?');
    const count = reputationOf(app, agent).evidenceCount;
    if (count !== rows + 1) throw new Error(`expected ${rows + 1} evidence rows (with the seed), found ${count}`);
    const ms = await alternateMs(
      runs,
      Math.min(10, runs),
      () => raw.all(userId, agent.configHash),
      () => reputationOf(app, agent),
    );
    return latencyFigures('reputation_read', ms, `${rows.toLocaleString('en-US')} evidence rows, 4 domains`);
  } finally {
    app.engine.close();
  }
}
