import type { App } from '../../app.js';
import { getChannel, getChannelByName } from '../../projections/channel-queries.js';
import { getGoal } from '../../projections/goal-queries.js';
import { getProject } from '../../projections/projects.js';
import { isOpenTask, openTasksOfAgent, openTasksReachedByUserSecret } from '../../projections/secret-reach-queries.js';
import type { SecretInfo } from '../../projections/secrets.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import { projectChannelName } from '../projects/tasks.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';
import { postSystemMessage } from '../notifications.js';

/**
 * Revoking a secret that a running or queued task needed must not fail silently. Inside the
 * revoke command, every unfinished task the secret reached (secret-reach-queries.ts) gets a system
 * message in its goal's channel (a project task: its project's channel) naming the secret and the task
 * — never the value — so its agents and the owner see why the next process goes without it.
 */
export function warnTasksOfRevokedSecret(app: App, by: Speaker, secret: SecretInfo, actor: CommandOptions): number[] {
  const warned: number[] = [];
  for (const taskId of tasksReached(app, secret)) {
    const task = getTask(app.engine.db, taskId);
    const channel = task ? channelOf(app, task) : null;
    if (!task || !channel) continue;
    const body =
      `⚠️ Secret ${secret.name} (${secret.scopeLabel}) was revoked by ${by.name}; task #${task.taskId} "${task.title}" (${task.status}) needed it. ` +
      `The processes Colony starts for this task no longer get ${secret.name}: set it again (colony secrets set ${secret.name} - --scope ${secret.scopeLabel}) or let the task go on without it.`;
    postSystemMessage(
      app,
      secret.ownerId,
      channel,
      body,
      {
        event: 'SecretRevoked',
        secret_id: secret.secretId,
        secret_name: secret.name,
        scope: secret.scopeLabel,
        task_id: task.taskId,
        goal_id: task.goalId,
        task_status: task.status,
      },
      actor,
    );
    warned.push(task.taskId);
  }
  return warned;
}

function tasksReached(app: App, s: SecretInfo): number[] {
  const db = app.engine.db;
  switch (s.scopeType) {
    case 'task':
      return isOpenTask(db, s.scopeId) ? [s.scopeId] : [];
    case 'agent':
      return openTasksOfAgent(db, s.scopeId);
    case 'user':
      return openTasksReachedByUserSecret(db, s.ownerId, s.name);
    default: {
      const never: never = s.scopeType;
      return never;
    }
  }
}

/** The channel a task's notices go to, by name: its goal's, else its project's; null when there is none. */
function channelOf(app: App, task: TaskRow): string | null {
  const db = app.engine.db;
  if (task.goalId !== null) {
    const goal = getGoal(db, task.goalId);
    return goal ? (getChannel(db, goal.channelId)?.name ?? null) : null;
  }
  // A task moved to another project (task_update) may name a project whose channel was never created.
  const project = task.projectId === null ? null : getProject(db, task.projectId);
  return project && getChannelByName(db, project.ownerId, projectChannelName(project))
    ? projectChannelName(project)
    : null;
}
