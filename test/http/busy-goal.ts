import type { App } from '../../src/app.js';
import { sendToChannel } from '../../src/actions/channels.js';
import { createGoal } from '../../src/actions/goals.js';
import { decideProposal, proposeTaskTree } from '../../src/actions/proposals.js';
import { claimTask, reportUsage } from '../../src/actions/tasks.js';
import type { TreeRequest } from '../../src/events/proposals.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { agentSpeaker, leaf, OWNER, ownerSpeaker } from './console-client.js';

/**
 * A goal with a long history for the time-travel tests and the scrub timing: a tree of `tasks` tasks
 * claimed by the agent, then messages in the goal channel and usage reports on its tasks, committed in
 * batches, until the goal's streams hold about `events` events (and the log a few more).
 */
export function busyGoal(
  app: App,
  worker: { agentId: number; name: string },
  events: number,
  tasks = 10,
): { goalId: number; start: number } {
  const O = ownerSpeaker();
  const W = agentSpeaker(worker.agentId, worker.name);
  const goalId = createGoal(
    app,
    O,
    {
      title: 'A busy goal',
      description: 'Many events for the time-travel tests.',
      budgets: { tokens: null, cents: null },
      maxSpawnDepth: 3,
      coordinatorConfig: 'default',
      approvalMode: 'human',
    },
    OWNER,
  ).goalId;
  const start = app.engine.head().position;
  const tree = {
    ...leaf('Root task'),
    children: Array.from({ length: tasks - 1 }, (_, i) => leaf(`Step ${i + 1}`)),
  } as TreeRequest;
  const { proposalId } = proposeTaskTree(app, O, goalId, 'Many small steps.', tree, OWNER);
  const { taskIds } = decideProposal(app, O, proposalId, 'approve', '', OWNER);
  for (const id of taskIds) claimTask(app, W, id, { actor: `agent:${worker.name}` });
  const channel = getGoal(app.engine.db, goalId)!.channelId;
  for (let n = 0; app.engine.head().position - start < events;) {
    app.engine.transact(OWNER, () => {
      for (let i = 0; i < 100; i += 1, n += 1) {
        if (n % 2 === 0)
          sendToChannel(
            app,
            O,
            { id: channel },
            { body: `Progress note ${n}`, subject: null, priority: 5, metadata: null, replyTo: null },
            OWNER,
          );
        else reportUsage(app, W, taskIds[n % taskIds.length]!, 3, 0, `step ${n}`, { actor: `agent:${worker.name}` });
      }
    });
  }
  return { goalId, start };
}
