import * as z from 'zod';
import { setTaskBlockers } from '../../actions/tasks/blockers.js';
import { speaker } from '../../events/principals.js';
import { blockersOf } from '../../projections/task-blocker-queries.js';
import { defineTool, type AnyTool } from '../tool.js';

/**
 * Task dependencies: set_task_blockers gives a task the whole list of tasks it waits on (its goal's, or its
 * project's). A task with a blocker that is not done cannot be claimed; when the last one is done, whoever
 * holds it — else the goal's coordinator, or the project's agent — is woken.
 */
const set = defineTool({
  name: 'set_task_blockers',
  title: 'Set what a task waits on',
  description:
    "Replaces a task's blockers with blocked_by (task ids; [] clears them): the task can be claimed only once every blocker is done (claim_task answers ErrTaskBlocked until then), and when the last one is done its assignee — else the goal's coordinator — is woken. Blockers are tasks of the same goal (a project task: of the same project), at most 32, not the task itself, none twice. The tenant's owner, the task's creator, its assignee or its goal's coordinator may change them. A list that would close a cycle (tasks waiting on each other for ever) is refused with ErrDependencyCycle and its details.cycle in order, nothing written — and an agent's attempt pauses it on that goal (a dependency_cycle breaker; the owner lifts it). Errors: ErrDependencyCycle, ErrTaskNotFound (the task or a blocker), ErrInvalidInput (itself, twice, too many, another goal's or project's), ErrForbidden, ErrTaskClosed (done or cancelled).",
  trust: 'write',
  surface: 'agent',
  module: 'tasks',
  input: z.strictObject({
    task_id: z.number().int().positive(),
    blocked_by: z.array(z.number().int().positive()).max(100),
  }),
  output: z.object({
    task_id: z.number().int(),
    status: z.string(),
    blocked_by: z.array(z.object({ task_id: z.number().int(), status: z.string(), done: z.boolean() })),
  }),
  handler(ctx, a) {
    const t = setTaskBlockers(ctx.app, speaker(ctx.caller), a.task_id, a.blocked_by, ctx.command);
    const blockedBy = blockersOf(ctx.app.engine.db, t).map((b) => ({
      task_id: b.taskId,
      status: b.status,
      done: b.status === 'done',
    }));
    return { task_id: t.taskId, status: t.status, blocked_by: blockedBy };
  },
});

export const taskBlockerTools: readonly AnyTool[] = [set];
