import { mkdirSync } from 'node:fs';
import { agentWorkspace, realResolve } from '../actions/projects/paths.js';
import type { App } from '../app.js';
import { getAgent, type AgentRow } from '../projections/principal-queries.js';
import { getProject, type ProjectRow } from '../projections/projects.js';
import { runtimeOf } from '../projections/run-queries.js';
import { getProposal } from '../projections/proposal-queries.js';
import type { TaskRow } from '../projections/task-queries.js';
import { getRecipe } from '../projections/verifiers.js';

/**
 * Where confined processes work. An agent works in its project's directory (xylocopa's agents work in
 * theirs), else in its own directory under the workspace. A command verifier runs in its recipe's own
 * directory when the owner gave one, else where the work it checks was done — the task's project, else
 * the assignee's working directory — never in a directory the agent chose (a task tree cannot name one).
 * Every directory is opened again, without following a symlink, when it is mounted (confine.ts); the
 * problems answered here are the ones a person can act on.
 */

export function agentWorkDir(app: App, agent: AgentRow): string | { problem: string } {
  const projectId = runtimeOf(app.engine.db, agent.agentId).projectId;
  const project = projectId === null ? null : getProject(app.engine.db, projectId);
  if (project && !project.archived) {
    const moved = movedProject(project);
    return moved ? { problem: `${moved}: the run was not started there` } : project.path;
  }
  const own = agentWorkspace(app, agent.name);
  mkdirSync(own, { recursive: true, mode: 0o755 });
  return own;
}

/** A project directory that no longer is itself (swapped for a symlink), in words; null when it is (or is missing: mounting says so). */
function movedProject(project: ProjectRow): string | null {
  let now: string;
  try {
    now = realResolve(project.path);
  } catch {
    return null;
  }
  return now === project.path ? null : `project ${project.name}'s directory ${project.path} now resolves to ${now}`;
}

/**
 * A directory recorded with the task that is not its recipe's own came from the task tree; tasks approved
 * before trees lost that choice may carry one an agent picked. It is ignored then (the owner's may stand).
 */
function chosenByAgent(app: App, task: TaskRow, cwd: string): boolean {
  const v = task.verifier;
  const recipe = v.kind === 'command' && v.recipeId !== undefined ? getRecipe(app.engine.db, v.recipeId) : null;
  if (recipe?.cwd === cwd) return false;
  const proposal = task.proposalId === null ? null : getProposal(app.engine.db, task.proposalId);
  return !proposal?.proposerKey.startsWith('user-');
}

export interface VerifierPlace {
  dir: string;
  /** The recipe's own directory (the owner's choice), or where the checked work lies. */
  source: 'recipe' | 'project' | 'assignee';
}

/** Where a command verifier runs (see above), or why it cannot run. */
export function verifierWorkDir(app: App, task: TaskRow): VerifierPlace | { problem: string } {
  const v = task.verifier;
  if (v.kind !== 'command') return { problem: 'not a command verifier' };
  if (v.cwd !== undefined && !chosenByAgent(app, task, v.cwd)) return { dir: v.cwd, source: 'recipe' };
  const project = task.projectId === null ? null : getProject(app.engine.db, task.projectId);
  if (project && !project.archived) {
    const moved = movedProject(project);
    return moved ? { problem: `verifier command not run: ${moved}` } : { dir: project.path, source: 'project' };
  }
  const assignee = task.assigneeAgentId === null ? null : getAgent(app.engine.db, task.assigneeAgentId);
  if (!assignee) return { problem: 'verifier command not run: the task has no assignee whose work it could check' };
  const dir = agentWorkDir(app, assignee);
  return typeof dir === 'string'
    ? { dir, source: 'assignee' }
    : { problem: `verifier command not run: ${dir.problem}` };
}
