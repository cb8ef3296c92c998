import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { configureBreakers } from '../../src/actions/breakers.js';
import type { BreakerOverrides } from '../../src/events/breakers.js';
import { openBreakersOf, type BreakerRow } from '../../src/projections/breaker-queries.js';
import { listRuns, type RunRow } from '../../src/projections/run-queries.js';
import { ok } from '../helpers/calls.js';
import type { RuntimeFixture } from '../helpers/runtime.js';
import { Browser, type Body } from '../http/console-client.js';

/**
 * What the breaker tests share: scripted agents (worker.ts talks MCP over HTTP like a real agent), a goal
 * of the owner's, the owner's breaker notices by channel, and the owner's console client over real sockets.
 */
export const WORKER = `node --import ${import.meta.resolve('tsx')} ${join(process.cwd(), 'test/fixtures/agents/worker.ts')}`;

export type World = RuntimeFixture & { owner: Client; console: Browser };

export async function world(f: RuntimeFixture & { owner: Client }): Promise<World> {
  const console = new Browser(f);
  assert.equal((await console.signIn(f.ownerToken)).status, 200);
  return Object.assign(f, { console });
}

export async function goal(w: World, title = 'A goal to loop on'): Promise<number> {
  const g = await ok(w.owner, 'create_goal', {
    title,
    description: 'A goal whose agents the breakers watch.',
    coordinator_config: 'default',
    approval_mode: 'auto',
  });
  return g.goal_id as number;
}

export const thresholds = (w: World, agentId: number, changes: Partial<BreakerOverrides>): void =>
  configureBreakers(w.app, w.ownerId, agentId, changes, { actor: 'user:owner' });

export const runsOf = (w: World, agentId: number): RunRow[] =>
  listRuns(w.app.engine.db, { agentId, limit: 200 }).reverse();

export const openOf = (w: World, agentId: number): BreakerRow[] => openBreakersOf(w.app.engine.db, agentId);

/** The channels the owner was told in of a trip of this agent: its DM once, and the goal channel once. */
export function notices(w: World, agentId: number): string[] {
  return (
    w.app.engine.db
      .prepare(
        `SELECT c.name FROM messages m JOIN channels c ON c.channel_id = m.channel_id
          WHERE json_extract(m.metadata, '$.event') = 'BreakerTripped' AND json_extract(m.metadata, '$.agent_id') = ?
          ORDER BY m.message_id`,
      )
      .all(agentId) as { name: string }[]
  ).map((r) => r.name);
}

/** A manual wake of the agent on a goal (null: outside goals), its run to its end; the run as it ended. */
export async function wakeOn(w: World, agentId: number, goalId: number | null): Promise<RunRow> {
  const { run } = w.reactor.wake({ agentId, source: 'manual', goalId, by: `user-${w.ownerId}` });
  await w.reactor.idle();
  return runsOf(w, agentId).find((r) => r.runId === run.runId)!;
}

/** The owner lifts the breaker from the console (POST /api/agents/:name/resume) and the agent's next run runs. */
export async function resumeFromConsole(w: World, name: string, goalId: number | null): Promise<Body> {
  return w.console.json(`/agents/${name}/resume`, { method: 'POST', body: { goal_id: goalId } });
}

/** The trip's refusal: the run refused at the `breaker` gate, its reason naming the breaker and the lift. */
export function refusedAtBreaker(run: RunRow, breaker: string, name: string): void {
  assert.equal(run.status, 'refused', JSON.stringify(run));
  assert.equal(run.gate, 'breaker');
  assert.match(run.reason ?? '', new RegExp(`${breaker} breaker.*colony agents resume ${name}`));
}
