import { buildSecretEnv } from '../actions/secrets/env.js';
import { pathPolicyFor, recheckRegistered } from '../actions/projects/paths.js';
import type { App } from '../app.js';
import { log } from '../log.js';
import { getGoal } from '../projections/goal-queries.js';
import type { TaskRow } from '../projections/task-queries.js';
import { verifierWorkDir } from './work-dirs.js';

/** What a command verifier's process gets: its working directory, its secrets and its environment. */

/**
 * Where the verifier runs (work-dirs.ts) and whether it may write there: only a recipe that says so, in
 * its own directory; a registered directory that moved since (swapped for a symlink) is refused.
 */
export function verifierPlace(app: App, task: TaskRow): { dir: string; writable: boolean } | { problem: string } {
  const place = verifierWorkDir(app, task);
  if ('problem' in place) return place;
  if (place.source !== 'recipe') return { dir: place.dir, writable: false };
  try {
    const dir = recheckRegistered(pathPolicyFor(app), place.dir, "the verifier's working directory");
    return { dir, writable: task.verifier.kind === 'command' && task.verifier.writable === true };
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
