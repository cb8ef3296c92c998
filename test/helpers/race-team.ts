import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner, registerAgent, speakerOf } from '../../src/actions/principals.js';
import { proposeTaskTree, reactTo } from '../../src/actions/proposals.js';
import { openApp, productProjections, type App } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { sequenceMarks } from '../../src/engine/ids.js';
import { readAllRows } from '../../src/engine/store.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import type { Speaker } from '../../src/events/principals.js';

/**
 * A team made with the real actions on SQLite and moved to a PostgreSQL store as `colony migrate` moves
 * one (rows with their hashes, id marks, read models built): the owner, `agents` agents that may claim
 * tasks, and a goal with a budget of `budgetTokens` tokens whose approved tree is one task. For the
 * races across nodes (test/engine/pg/nodes.test.ts), which then run the real actions as units of work.
 */
export interface RaceTeam {
  tenant: string;
  ownerId: number;
  agentIds: number[];
  goalId: number;
  taskId: number;
  /** Their MCP tokens, for the races through `colony serve` nodes (test/cli/serve-nodes.test.ts). */
  ownerToken: string;
  agentTokens: string[];
}

/** The team's agent `i` and its owner, as the MCP layer would name them to an action. */
export const agentOf = (team: Omit<RaceTeam, 'tenant'>, i: number): Speaker => ({
  key: `agent-${team.agentIds[i]}`,
  name: `racer-${i}`,
  tenant: team.ownerId,
});
export const ownerOf = (team: Omit<RaceTeam, 'tenant'>): Speaker => ({
  key: `user-${team.ownerId}`,
  name: 'owner',
  tenant: team.ownerId,
});

/** The team made with the real actions in a fresh SQLite app (no principals yet). */
export function makeTeam(app: App, agents: number, budgetTokens: number): Omit<RaceTeam, 'tenant'> {
  const asOwner = { actor: 'user:owner' };
  const created = createOwner(app, 'owner', { actor: 'system' });
  const ownerId = created.userId;
  const registered = Array.from({ length: agents }, (_, i) =>
    registerAgent(
      app,
      {
        name: `racer-${i}`,
        ownerId,
        model: 'test-model',
        systemPrompt: 'Claim the task.',
        toolScope: ['claim_task', 'report_usage'],
        tier: 'supervised',
        command: null,
        parentId: null,
        spawnDepth: 0,
      },
      asOwner,
    ),
  );
  const agentIds = registered.map((a) => a.agentId);
  const owner = speakerOf(app, `user-${ownerId}`);
  const goal = createGoal(
    app,
    owner,
    {
      title: 'The race',
      description: 'One task, many agents.',
      budgets: { tokens: budgetTokens, cents: null },
      maxSpawnDepth: 1,
      coordinatorConfig: 'default',
      approvalMode: 'human',
    },
    asOwner,
  );
  const coordinator = speakerOf(app, `agent-${goal.coordinatorAgentId}`);
  const tree = { title: 'The one task', description: 'Whoever claims it first does it.' };
  const proposed = proposeTaskTree(app, coordinator, goal.goalId, 'One task.', tree, { actor: 'agent:coordinator' });
  const approved = reactTo(app, owner, proposed.proposalMessageId, 'approve', null, asOwner);
  return {
    ownerId,
    agentIds,
    goalId: goal.goalId,
    taskId: approved.decided!.taskIds[0]!,
    ownerToken: created.token,
    agentTokens: registered.map((a) => a.token),
  };
}

/** The team, made on SQLite and moved to the PostgreSQL store at `url` (tenant `team-<owner id>`). */
export async function raceTeam(url: string, agents: number, budgetTokens: number): Promise<RaceTeam> {
  const dataDir = mkdtempSync(join(tmpdir(), 'colony-race-'));
  const app = openApp({ dataDir, durability: 'normal', clock: fixedClock('2026-04-01T09:00:00.000Z', 1000) });
  const store = await PgEventStore.open(url, { projections: productProjections });
  try {
    const team = makeTeam(app, agents, budgetTokens);
    const tenant = `team-${team.ownerId}`;
    const rows = readAllRows(app.engine.db, { after: 0, limit: 1_000_000 });
    await store.importRows(tenant, rows);
    await store.importSequences(tenant, sequenceMarks(app.engine.db));
    return { tenant, ...team };
  } finally {
    await store.close();
    app.engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
