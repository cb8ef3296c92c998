import type { App } from '../src/app.js';
import { serveColony } from './serve.js';
import { alternateMs, latencyFigures, type Figure } from './util.js';

/**
 * goals_list_ms (median) and goals_list_p95_ms: `GET /api/goals?limit=N` for the owner, over a real
 * loopback socket (fetch with keep-alive, body read), on a store of N goals × 1,000 tasks — every goal
 * on one page, each with its totals. Baseline: `GET /health` on the same server and connection pool
 * (routing, JSON and the socket with nothing behind them). Runs alternate.
 */
export async function benchGoalsList(
  app: App,
  ownerToken: string,
  goals: number,
  runs: number,
): Promise<Record<string, Figure>> {
  const served = await serveColony(app);
  try {
    const url = `${served.base}/api/goals?limit=${goals}`;
    const headers = { Authorization: `Bearer ${ownerToken}` };
    const get = async (u: string, h: Record<string, string> = {}) => {
      const res = await fetch(u, { headers: h });
      const body = await res.text();
      if (!res.ok) throw new Error(`GET ${u}: ${res.status} ${body.slice(0, 200)}`);
      return body;
    };
    const list = JSON.parse(await get(url, headers)) as { total: number; goals: { task_count: number }[] };
    if (list.total !== goals || list.goals.length !== goals || list.goals.some((g) => g.task_count !== 1000)) {
      throw new Error(
        `GET /api/goals listed ${list.goals.length} of ${list.total} goals, not ${goals} of 1,000 tasks each`,
      );
    }
    const ms = await alternateMs(
      runs,
      Math.min(20, runs),
      () => get(`${served.base}/health`),
      () => get(url, headers),
    );
    return latencyFigures(
      'goals_list',
      ms,
      `${goals} goals × 1,000 tasks (${(goals * 1000).toLocaleString('en-US')} tasks)`,
    );
  } finally {
    await served.close();
  }
}
