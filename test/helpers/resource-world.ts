import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { configureRuntime } from '../../src/actions/runs/agent-controls.js';
import {
  finishRun,
  recordSessionMessage,
  requestRun,
  startQueuedRun,
  type RunOutcome,
} from '../../src/actions/runs.js';
import { fixedClock } from '../../src/clock.js';
import type { StoredEvent } from '../../src/engine/event.js';
import type { SessionRole } from '../../src/events/runs.js';
import { authenticate } from '../../src/mcp/auth.js';
import { callTool } from '../../src/mcp/call.js';
import { getRun, type RunRow } from '../../src/projections/run-queries.js';
import { mcpFixture, type McpFixture } from './mcp.js';
import { type Caller } from '../../src/events/principals.js';

/**
 * A small team for the resources and prompts tests, made through the real tool pipeline (callTool:
 * auth, scope, validation, handler, audit — no transport) and the run actions on a frozen, hand-advanced
 * clock (no processes): a goal with a two-task tree, agents with and without a spawn lineage, finished
 * runs with transcripts, and a second tenant with a goal of its own.
 */
export const T0 = '2026-03-01T09:00:00.000Z';

export interface World {
  f: McpFixture;
  clock: ReturnType<typeof fixedClock>;
  owner: Caller;
  callerOf(token: string): Caller;
  /** Calls a tool through the real pipeline and returns its structuredContent; fails the test on an error result. */
  tool(caller: Caller, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** An agent with a backend (so it can run) and no cooldown. */
  agent(
    name: string,
    extra?: { parentId?: number; toolScope?: string[]; ownerId?: number },
  ): { agentId: number; token: string };
  /** A finished run with its transcript; on `taskId`, when given. */
  run(agentId: number, messages?: [SessionRole, string][], outcome?: Partial<RunOutcome>, taskId?: number): RunRow;
  /** The events appended while `fn` runs. */
  eventsOf(fn: () => Promise<unknown> | unknown): Promise<StoredEvent[]>;
}

/** `t`: the test that owns the world (closed after it); without one, the caller closes `w.f`. */
export async function world(t?: TestContext): Promise<World> {
  const clock = fixedClock(T0);
  const f = await mcpFixture({ clock });
  t?.after(() => f.close());
  const callerOf = (token: string): Caller => authenticate(f.app, token)!;
  const tool: World['tool'] = async (caller, name, args) => {
    const result = await callTool(f.ctx, caller, name, args);
    assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown>;
  };
  const agent: World['agent'] = (name, extra = {}) => {
    const ownerId = extra.ownerId ?? f.owner.userId;
    const a = f.addAgent(name, {
      command: 'true',
      parentId: extra.parentId ?? null,
      spawnDepth: extra.parentId ? 1 : 0,
      ownerId,
      toolScope: extra.toolScope,
    });
    configureRuntime(f.app, ownerId, a.agentId, { cooldownSec: 0 }, 'owner', { actor: 'user:owner' });
    return { agentId: a.agentId, token: a.token };
  };
  const run: World['run'] = (agentId, messages = [], outcome = {}, taskId) => {
    clock.advance(60_000);
    const queued = requestRun(f.app, {
      agentId,
      ...(taskId === undefined ? {} : { taskId }),
      source: 'manual',
      by: 'user-1',
    });
    assert.equal(queued.kind, 'queued', `run of agent ${agentId} was ${queued.kind}: ${queued.run.reason}`);
    assert.ok(startQueuedRun(f.app, queued.run.runId), 'the run started');
    for (const [role, content] of messages) recordSessionMessage(f.app, queued.run.runId, role, content);
    finishRun(f.app, queued.run.runId, {
      status: 'succeeded',
      exitCode: 0,
      signal: null,
      durationMs: 5,
      tokensIn: 0,
      tokensOut: 0,
      costCents: 0,
      outputTail: '',
      agentText: null,
      ...outcome,
    });
    return getRun(f.app.engine.db, queued.run.runId)!;
  };
  const eventsOf: World['eventsOf'] = async (fn) => {
    const seen: StoredEvent[] = [];
    const sub = f.app.engine.bus.events$.subscribe((e) => seen.push(e));
    try {
      await fn();
    } finally {
      sub.unsubscribe();
    }
    return seen;
  };
  return { f, clock, owner: callerOf(f.ownerToken), callerOf, tool, agent, run, eventsOf };
}

/** A goal in auto mode with a root task and one child, made by the owner's tools. */
export async function goalWithTree(
  w: World,
  caller: Caller,
  title: string,
): Promise<{ goalId: number; taskIds: number[] }> {
  const g = await w.tool(caller, 'create_goal', {
    title,
    description: `${title}: the whole of it, done well.`,
    approval_mode: 'auto',
    budget_dollars_cents: 1000,
  });
  const p = await w.tool(caller, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: {
      title: 'Root task',
      description: 'The root of the work to do.',
      children: [{ title: 'Child task', description: 'A part of the work to do.' }],
    },
  });
  return { goalId: g.goal_id as number, taskIds: p.task_ids as number[] };
}
