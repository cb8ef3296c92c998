import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { openApp } from '../src/app.js';
import { createTeam, seedGoal } from './goal-data.js';
import { openHttpSessions, type Session } from './mcp.js';
import { serveColony } from './serve.js';
import { figure, median, type Figure } from './util.js';

/**
 * spawn_per_s: agents spawned per second through propose_agent in an auto-approval goal over MCP
 * Streamable HTTP — each call checks the caps and the name, posts the proposal to #approvals, and the
 * system's approval creates the agent (config hash, sealed token, reputation seeded from the parent, the
 * proposer's DM) — one session, sequential calls, durability FULL. Baseline: `whoami` calls/s over the
 * same session, alternated by round.
 */
export async function benchSpawn(dir: string, o: { spawns: number; rounds: number }): Promise<Figure> {
  const data = join(dir, 'spawn');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data });
  const served = await serveColony(app);
  let sessions: Session[] = [];
  try {
    const team = createTeam(app, 1, ['whoami', 'propose_agent', 'my_status']);
    const { goalId, leaves } = seedGoal(app, team.owner, 1, { roots: 1, children: 1, leaves: 1 });
    sessions = await openHttpSessions(`${served.base}/mcp`, { Authorization: `Bearer ${team.agents[0]!.token}` }, 1);
    const client = sessions[0]!.client;
    let n = 0;
    const spawn = async () => {
      n += 1;
      const r = await client.callTool({
        name: 'propose_agent',
        arguments: {
          goal_id: goalId,
          parent_task_id: leaves[0]!,
          name: `scanner-${n}`,
          model: 'bench-model',
          system_prompt: 'You scan the source for command-line flags.',
          tool_scope: ['my_status'],
          autonomy_tier: 'supervised',
          reason: 'One scanner per source folder.',
        },
      });
      if (r.isError || (r.structuredContent as { status?: string }).status !== 'approved')
        throw new Error(`propose_agent failed: ${JSON.stringify(r.content)}`);
    };
    const whoami = async () => {
      const r = await client.callTool({ name: 'whoami', arguments: {} });
      if (r.isError) throw new Error('whoami failed');
    };
    const rate = async (count: number, job: () => Promise<void>) => {
      const t0 = performance.now();
      for (let i = 0; i < count; i++) await job();
      return count / ((performance.now() - t0) / 1000);
    };
    await rate(Math.ceil(o.spawns / 2), whoami);
    await rate(Math.ceil(o.spawns / 4), spawn);
    const rates = { spawn: [] as number[], whoami: [] as number[] };
    for (let r = 0; r < o.rounds; r++) {
      rates.whoami.push(await rate(o.spawns, whoami));
      rates.spawn.push(await rate(o.spawns, spawn));
    }
    return figure(median(rates.spawn), 'agents/s', median(rates.whoami));
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    await served.close();
    app.engine.close();
  }
}
