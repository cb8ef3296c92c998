import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { openApp } from '../src/app.js';
import { createTeam, seedGoal } from './goal-data.js';
import { openHttpSessions, type Session } from './mcp.js';
import { serveColony } from './serve.js';
import { figure, median, type Figure } from './util.js';

/**
 * claim_complete_per_s: tasks/s through claim_task + complete_task (auto verifier → done) over MCP
 * Streamable HTTP on a real loopback socket: 10 agents, each with its own token and session, working
 * concurrently through one goal of many leaf tasks (each takes the next unclaimed leaf from a shared
 * cursor, so no claim collides). The store is durability FULL, as `colony serve` runs by default.
 *
 * Baseline: `whoami` over the same server and the same 10 agent sessions, counted in pairs — the same
 * number of MCP round trips (with bearer auth, the caller re-check and the audit row) as one task, minus
 * the write: two commands, their projections, the goal-channel notices and the fsyncs. The ratio is what
 * share of the bare call rate the task lifecycle keeps. Rounds alternate; medians count.
 */
const AGENTS = 10;

export async function benchClaimComplete(
  dir: string,
  o: { tasks: number; rounds: number; warmup: number },
): Promise<Figure> {
  const data = join(dir, 'claim');
  mkdirSync(data, { recursive: true });
  const app = openApp({ dataDir: data });
  let sessions: Session[] = [];
  const served = await serveColony(app);
  try {
    const team = createTeam(app, AGENTS, ['whoami', 'claim_task', 'complete_task']);
    const needed = o.tasks * (o.rounds + 1) + o.warmup;
    // Trees of 10 × 20 leaves (211 tasks): a proposal's rendered message must stay within 16,000 characters.
    const shape = { roots: Math.ceil(needed / 200), children: 10, leaves: 20 };
    const { leaves } = seedGoal(app, team.owner, 1, shape);
    sessions = (
      await Promise.all(
        team.agents.map((a) => openHttpSessions(`${served.base}/mcp`, { Authorization: `Bearer ${a.token}` }, 1)),
      )
    ).flat();
    let next = 0;
    const work = async (client: Session['client']) => {
      const taskId = leaves[next++];
      if (taskId === undefined) throw new Error('the benchmark goal ran out of leaf tasks');
      await call(client, 'claim_task', { task_id: taskId }, 'claimed');
      await call(client, 'complete_task', { task_id: taskId, summary: 'Implemented and tested.' }, 'done');
    };
    const whoamiPair = async (client: Session['client']) => {
      await call(client, 'whoami', {});
      await call(client, 'whoami', {});
    };
    await pool(sessions, Math.ceil(o.warmup / 2), whoamiPair);
    await pool(sessions, o.warmup, work);
    const rates = { tasks: [] as number[], pairs: [] as number[] };
    for (let r = 0; r < o.rounds; r++) {
      rates.pairs.push(await pool(sessions, o.tasks, whoamiPair));
      rates.tasks.push(await pool(sessions, o.tasks, work));
    }
    const done = app.engine.db.prepare(`SELECT count(*) AS n FROM tasks WHERE status = 'done'`).get() as { n: number };
    if (done.n !== next) throw new Error(`${next} tasks were worked but ${done.n} are done`);
    return figure(median(rates.tasks), 'tasks/s', median(rates.pairs));
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    await served.close();
    app.engine.close();
  }
}

async function call(
  client: Session['client'],
  name: string,
  args: Record<string, unknown>,
  status?: string,
): Promise<void> {
  const r = await client.callTool({ name, arguments: args });
  const got = (r.structuredContent as { status?: string } | undefined)?.status;
  if (r.isError || (status !== undefined && got !== status))
    throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
}

/** `n` jobs shared by all sessions, each session one job at a time; jobs per second. */
async function pool(
  sessions: readonly Session[],
  n: number,
  job: (client: Session['client']) => Promise<void>,
): Promise<number> {
  let left = n;
  const started = performance.now();
  await Promise.all(
    sessions.map(async ({ client }) => {
      while (left > 0) {
        left--;
        await job(client);
      }
    }),
  );
  return n / ((performance.now() - started) / 1000);
}
