import { createGoal } from '../src/actions/goals.js';
import { registerAgent, createOwner } from '../src/actions/principals.js';
import { proposeTaskTree } from '../src/actions/proposals.js';
import { claimTask, completeTask, reportUsage } from '../src/actions/tasks.js';
import type { App } from '../src/app.js';
import type { TreeRequest as TreeNode } from '../src/events/proposals.js';
import { type Speaker } from '../src/events/principals.js';
import { type CommandOptions } from '../src/engine/handle.js';

/**
 * Goal data for the goal benchmarks, built only through Colony's own commands (create_goal,
 * propose_task_tree in auto mode; claim, complete, report_usage): no projection row is written by hand. Each goal is one outer command, so
 * its trees commit together as nested savepoints (engine.transact nests) instead of one fsync per tree.
 */
export interface Team {
  owner: Speaker;
  ownerToken: string;
  agents: { speaker: Speaker; agentId: number; token: string }[];
}

const SYSTEM: CommandOptions = { actor: 'system' };
const OWNER: CommandOptions = { actor: 'user:owner' };
export const TREE = { roots: 10, children: 9, leaves: 10 };
export interface SeededGoal {
  goalId: number;
  leaves: number[];
}

export function createTeam(app: App, agents: number, tools: string[]): Team {
  const { userId, token } = createOwner(app, 'owner', SYSTEM);
  const owner: Speaker = { key: `user-${userId}`, name: 'owner', tenant: userId };
  const team: Team = { owner, ownerToken: token, agents: [] };
  for (let i = 1; i <= agents; i++) {
    const name = `worker-${i}`;
    const a = registerAgent(
      app,
      {
        name,
        ownerId: userId,
        model: 'bench-model',
        systemPrompt: 'You do small, careful tasks.',
        toolScope: tools,
        tier: 'autonomous',
        command: null,
        parentId: null,
        spawnDepth: 0,
      },
      { actor: 'user:owner' },
    );
    team.agents.push({
      speaker: { key: `agent-${a.agentId}`, name, tenant: userId },
      agentId: a.agentId,
      token: a.token,
    });
  }
  return team;
}

/** One root with `children` children of `leaves` leaves each, billing codes spread over three domains. */
export function taskTree(root: number, children: number, leaves: number): TreeNode {
  const codes = ['backend', 'frontend', 'docs'];
  return {
    title: `Workstream ${root}`,
    description: `Everything workstream ${root} needs to ship, split into parts.`,
    acceptance_criteria: `All parts of workstream ${root} are merged and verified.`,
    billing_code: codes[root % 3],
    children: Array.from({ length: children }, (_, c) => ({
      title: `Part ${root}.${c}`,
      description: `Part ${c} of workstream ${root}: design, implement and test it.`,
      acceptance_criteria: 'Tests pass and the reviewer is satisfied.',
      children: Array.from({ length: leaves }, (_, l) => ({
        title: `Step ${root}.${c}.${l}`,
        description: `Implement step ${l} of part ${c} of workstream ${root} and add its tests.`,
      })),
    })),
  };
}

/**
 * A goal in auto approval mode whose `roots` trees (default 10 × 9 × 10 = 1,000 tasks) go through
 * propose_task_tree, approved at once — all in one command. Returns the goal id and the leaf ids.
 */
export function seedGoal(app: App, owner: Speaker, n: number, shape = TREE): SeededGoal {
  return app.engine.transact(OWNER, () => {
    const { goalId } = newGoal(app, owner, n);
    const leaves: number[] = [];
    for (let r = 0; r < shape.roots; r++) {
      const p = proposeTaskTree(
        app,
        owner,
        goalId,
        `Workstream ${r} of release ${n}.`,
        taskTree(r, shape.children, shape.leaves),
        OWNER,
      );
      if (!p.approved) throw new Error(`proposal ${p.proposalId} was not auto-approved`);
      leaves.push(...leavesOf(p.taskIds, shape));
    }
    return { goalId, leaves };
  }).value!;
}

function newGoal(app: App, owner: Speaker, n: number) {
  return createGoal(
    app,
    owner,
    {
      title: `Goal ${n}: ship release ${n}`,
      description: `Release ${n} of the product, from plan to verified delivery.`,
      budgets: { tokens: null, cents: null },
      requireEvidence: false,
      maxSpawnDepth: 3,
      coordinatorConfig: 'default',
      approvalMode: 'auto',
    },
    OWNER,
  );
}

/** planTree numbers depth-first: the root, then each child followed by its leaves. */
function leavesOf(taskIds: readonly number[], shape: typeof TREE): number[] {
  const out: number[] = [];
  for (let c = 0; c < shape.children; c++)
    out.push(...taskIds.slice(2 + c * (shape.leaves + 1), 2 + c * (shape.leaves + 1) + shape.leaves));
  return out;
}

/** One agent's whole pass over a task: claim, report usage, complete (the auto verifier marks it done). */
export function workTask(app: App, agent: Speaker, taskId: number, i: number): void {
  const actor = { actor: `agent:${agent.name}` };
  claimTask(app, agent, taskId, actor);
  reportUsage(app, agent, taskId, 1000 + (i % 7) * 250, 3 + (i % 5), null, actor);
  completeTask(
    app,
    agent,
    taskId,
    `Step done; ${i % 3 === 0 ? 'one follow-up noted' : 'nothing left open'}.`,
    [],
    actor,
  );
}

/**
 * Progress on a goal as agents would leave it: of its leaves, `done` are claimed, charged and done,
 * then `claimed` more are held (with some usage). Batched in commands of 200 tasks.
 */
export function progress(app: App, team: Team, leaves: readonly number[], done: number, claimed: number): void {
  const agents = team.agents;
  for (let from = 0; from < done + claimed; from += 200) {
    app.engine.transact({ actor: 'system' }, () => {
      for (let i = from; i < Math.min(done + claimed, from + 200); i++) {
        const agent = agents[i % agents.length]!.speaker;
        if (i < done) workTask(app, agent, leaves[i]!, i);
        else {
          claimTask(app, agent, leaves[i]!, { actor: `agent:${agent.name}` });
          if (i % 2 === 0) reportUsage(app, agent, leaves[i]!, 500, 1, 'in progress', { actor: `agent:${agent.name}` });
        }
      }
    });
  }
}

/**
 * `goals` goals of 1,000 tasks for one owner, every one through propose_task_tree; the first carries
 * progress (300 leaves done with usage, 100 claimed, half of those charged). Returns the first goal's id.
 */
export function seedGoals(app: App, team: Team, goals: number): number {
  const first = seedGoal(app, team.owner, 1);
  progress(app, team, first.leaves, 300, 100);
  for (let n = 2; n <= goals; n++) seedGoal(app, team.owner, n);
  return first.goalId;
}
