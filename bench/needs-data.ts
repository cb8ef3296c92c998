import { createGoal } from '../src/actions/goals.js';
import { proposeTaskTree } from '../src/actions/proposals.js';
import { requestResource } from '../src/actions/resources.js';
import type { App } from '../src/app.js';
import type { TreeRequest } from '../src/events/proposals.js';
import { tasksOfGoal } from '../src/projections/task-queries.js';
import type { Team } from './goal-data.js';

/**
 * What waits on the owner for the "Needs you" benchmark, built through Colony's own commands like the rest
 * of the goal data: task-tree proposals an agent makes for a draft goal it coordinates (human approval, so
 * they stay pending; one pending proposal per goal, so a goal each), and resource requests agents make for
 * the tasks they hold.
 */
const OWNER = { actor: 'user:owner' };
let drafts = 0;

/** `n` pending task-tree proposals of 5 tasks (a root and 4 steps), each on a draft goal of its own. */
export function pendingProposals(app: App, team: Team, n: number): number[] {
  return app.engine.transact(OWNER, () => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      drafts += 1;
      const agent = team.agents[drafts % team.agents.length]!;
      const { goalId } = createGoal(
        app,
        team.owner,
        {
          title: `Draft ${drafts}: plan the migration of service ${drafts}`,
          description: `Move service ${drafts} to the new queue without downtime.`,
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 3,
          coordinatorConfig: agent.speaker.name,
          approvalMode: 'human',
        },
        OWNER,
      );
      const p = proposeTaskTree(
        app,
        agent.speaker,
        goalId,
        `Four steps for service ${drafts}: inventory, dual write, switch, clean up.`,
        smallTree(drafts),
        { actor: `agent:${agent.speaker.name}` },
      );
      if (p.approved) throw new Error(`proposal ${p.proposalId} was approved at once: it should wait`);
      ids.push(p.proposalId);
    }
    return ids;
  }).value!;
}

/** `n` pending resource requests, each by the agent holding one of `goalId`'s claimed tasks. */
export function pendingRequests(app: App, team: Team, goalId: number, n: number): number[] {
  const held = tasksOfGoal(app.engine.db, goalId).filter((t) => t.status === 'claimed' && t.assigneeAgentId !== null);
  if (held.length < n) throw new Error(`goal ${goalId} holds ${held.length} claimed tasks, ${n} wanted`);
  return app.engine.transact(OWNER, () =>
    held.slice(0, n).map((t, i) => {
      const agent = team.agents.find((a) => a.agentId === t.assigneeAgentId)!;
      return requestResource(
        app,
        agent.speaker,
        {
          name: `SERVICE_${i}_API_KEY`,
          resourceType: 'api_key',
          reason: `Step ${t.title} calls service ${i}'s API, which needs a key.`,
          taskId: t.taskId,
        },
        { actor: `agent:${agent.speaker.name}` },
      ).requestId;
    }),
  ).value!;
}

function smallTree(n: number): TreeRequest {
  const steps = ['Inventory the callers', 'Write to both queues', 'Switch the readers', 'Remove the old queue'];
  return {
    title: `Migrate service ${n}`,
    description: `Service ${n} moves to the new queue, one safe step at a time.`,
    acceptance_criteria: 'The old queue has no readers or writers left.',
    children: steps.map((s) => ({ title: `${s} of service ${n}`, description: `${s}, then check it.` })),
  };
}
