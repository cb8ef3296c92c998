import { join } from 'node:path';
import { buildSecretEnv } from '../actions/secrets/env.js';
import { pathPolicyFor, recheckRegistered } from '../actions/projects/paths.js';
import type { App } from '../app.js';
import { log } from '../log.js';
import { getGoal } from '../projections/goal-queries.js';
import type { TaskRow } from '../projections/task-queries.js';

/** What a command verifier's process gets: its working directory, its secrets and its environment. */

/** The directory approved with the task, re-resolved now: a directory swapped for a symlink since is refused. */
export function verifierDirectory(app: App, cwd: string | undefined): string | { problem: string } {
  if (cwd === undefined) return join(app.dataDir, 'workspace');
  try {
    return recheckRegistered(pathPolicyFor(app), cwd, "the verifier's working directory");
  } catch (e) {
    return { problem: `verifier command not run: ${(e as Error).message}` };
  }
}

/**
 * The secrets for this process only: the task's, plus the user-scope secrets its recipe was granted by
 * name — never the assignee's, never the owner's others. Colony's own variables (verifierEnvironment)
 * win over a secret of the same name. If they cannot be opened (wrong master key) the command runs
 * without them and the log says why.
 */
export function verifierSecrets(app: App, task: TaskRow, ownerId: number): Record<string, string> {
  const granted = task.verifier.kind === 'command' ? (task.verifier.secrets ?? []) : [];
  try {
    return buildSecretEnv(app, {
      ownerId,
      agentId: null,
      taskId: task.taskId,
      purpose: 'command_verifier',
      userSecrets: granted,
    });
  } catch (err) {
    log.warn(
      { reason: (err as Error).message, taskId: task.taskId },
      'secrets were not injected into the verifier command',
    );
    return {};
  }
}

/** A clean environment: the task context and what a shell needs, never the server's own secrets. */
export function verifierEnvironment(app: App, task: TaskRow): NodeJS.ProcessEnv {
  const goal = task.goalId === null ? null : getGoal(app.engine.db, task.goalId);
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: process.env.LANG ?? 'C.UTF-8',
    COLONY_TASK_ID: String(task.taskId),
    COLONY_TASK_TITLE: task.title,
    COLONY_TASK_DESCRIPTION: task.description,
    COLONY_TASK_ACCEPTANCE_CRITERIA: task.acceptanceCriteria,
    COLONY_TASK_ANCESTRY: JSON.stringify(task.ancestry),
    COLONY_GOAL_ID: task.goalId === null ? '' : String(task.goalId),
    COLONY_GOAL_TITLE: goal?.title ?? '',
  };
}
