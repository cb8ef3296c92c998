import type { Database } from 'better-sqlite3';
import type { WakeRequest } from '../actions/runs.js';
import type { StoredEvent } from '../engine/event.js';
import type { TaskCompleted, TaskDispatched, TaskVerified } from '../events/tasks.js';
import { getGoal } from '../projections/goal-queries.js';
import { getAgent } from '../projections/principal-queries.js';
import { getProject } from '../projections/projects.js';
import { runningRunOf } from '../projections/run-queries.js';
import { getTask, ownerOfTask } from '../projections/task-queries.js';
import { childrenOf, projectAgentIds, taskWokenBy } from '../projections/wake-queries.js';
import { childrenDonePrompt, dispatchPrompt, verificationPrompt } from './wake-prompts.js';
import { rejectionPrompt } from './rejection-prompt.js';

/**
 * Wake-ups from task facts, so that no task waits on someone nobody told:
 *
 * - verification_requested — a task handed in for a peer verifier wakes that verifier with the summary
 *   and the verify_task call.
 * - verification_rejected — a rejection within the goal's retry limit hands the task back to its assignee,
 *   woken with the verifier's feedback verbatim (rejection-prompt.ts) to fix the work and hand it in again.
 * - children_done — the last child of a parent becoming done (or cancelled, with at least one done)
 *   offers the parent for completion: to its assignee if it is held, else to the goal's coordinator.
 *   Once per parent: a parent that already had this wake-up — queued, merged or refused — gets no other.
 * - task_dispatched — a dispatched project task (PENDING) wakes the project's agent with the task, like
 *   xylocopa's poller; a task someone claimed meanwhile is left to that claim's own wake-up.
 *
 * Each is an ordinary WakeRequest, so it passes the same gates (stopped, quarantine, task closed, budget,
 * trigger depth, daily run budget, cooldown) and coalesces per (agent, task). The facts are read as the
 * projections stand now (the reactor runs after commit), so every check is of the current state.
 */
const OPEN = new Set(['approved', 'claimed', 'in_progress']);
const HELD = new Set(['claimed', 'in_progress']);

export function taskWakes(db: Database, e: StoredEvent): WakeRequest[] {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'TaskCompleted':
      return verificationWake(db, d as unknown as TaskCompleted['data']);
    case 'TaskVerified':
      if (d.to === 'claimed') return rejectedWake(db, d as unknown as TaskVerified['data']);
      return d.to === 'done' ? childrenDoneWake(db, d.taskId as number) : [];
    case 'TaskCancelled':
      return childrenDoneWake(db, d.taskId as number);
    case 'TaskDispatched':
      return dispatchWake(db, d as unknown as TaskDispatched['data']);
    default:
      return [];
  }
}

const scopeOf = (db: Database, agentId: number): string[] => getAgent(db, agentId)?.toolScope ?? [];

function verificationWake(db: Database, d: TaskCompleted['data']): WakeRequest[] {
  const task = getTask(db, d.taskId);
  if (task?.verifier.kind !== 'peer' || task.status !== 'awaiting_verification') return [];
  const verifier = task.verifier.agent_id;
  const agentName = getAgent(db, d.agentId)?.name ?? `agent ${d.agentId}`;
  const prompt = verificationPrompt(
    task,
    { agentName, summary: d.summary, artifactMessageIds: d.artifactMessageIds },
    scopeOf(db, verifier),
  );
  return [{ agentId: verifier, source: 'verification_requested', taskId: task.taskId, by: 'system', prompt }];
}

function rejectedWake(db: Database, d: TaskVerified['data']): WakeRequest[] {
  const task = getTask(db, d.taskId);
  const agentId = d.returned?.agentId;
  // Acted on already (handed in again, released, expired) by the time the reactor reads it: nothing to ask.
  if (!task || agentId === undefined || !HELD.has(task.status) || task.assigneeAgentId !== agentId) return [];
  const prompt = rejectionPrompt(task, d, scopeOf(db, agentId));
  return [{ agentId, source: 'verification_rejected', taskId: task.taskId, by: 'system', prompt }];
}

function childrenDoneWake(db: Database, childId: number): WakeRequest[] {
  const parentId = getTask(db, childId)?.parentId ?? null;
  const parent = parentId === null ? null : getTask(db, parentId);
  if (!parent || !OPEN.has(parent.status)) return [];
  const children = childrenOf(db, parent.taskId);
  const finished = children.every((c) => c.status === 'done' || c.status === 'cancelled');
  if (!finished || !children.some((c) => c.status === 'done')) return [];
  // Two children may finish before the reactor reads either fact: the second read must not offer it again.
  if (taskWokenBy(db, parent.taskId, 'children_done')) return [];
  const holds = HELD.has(parent.status) && parent.assigneeAgentId !== null;
  const goal = parent.goalId === null ? null : getGoal(db, parent.goalId);
  const agentId = holds ? parent.assigneeAgentId! : goal?.coordinatorAgentId;
  if (agentId === undefined) return [];
  const coordinates = agentId === goal?.coordinatorAgentId;
  const prompt = childrenDonePrompt({
    parent,
    children,
    holds,
    coordinates,
    goalId: parent.goalId,
    scope: scopeOf(db, agentId),
  });
  return [{ agentId, source: 'children_done', taskId: parent.taskId, by: 'system', prompt }];
}

function dispatchWake(db: Database, d: TaskDispatched['data']): WakeRequest[] {
  const task = getTask(db, d.taskId);
  if (!task || task.status !== 'approved' || task.projectId === null) return [];
  const owner = ownerOfTask(db, task);
  const project = getProject(db, task.projectId);
  if (owner === null || !project) return [];
  // The project's agent Colony can run (its own backend or the team's); an agent stopped is still woken — and refused, on the record — when it is the only one.
  const agentId = projectAgentIds(db, owner, task.projectId).find((id) => getAgent(db, id)?.runnable);
  if (agentId === undefined) return [];
  // A dispatch an agent made during its run wakes one level deeper, so agents dispatching to each other stop at the max trigger depth.
  const dispatcher = d.by.key.startsWith('agent-') ? runningRunOf(db, Number(d.by.key.slice('agent-'.length))) : null;
  const retryOf = d.from === 'proposed' ? null : d.from;
  const prompt = dispatchPrompt(task, project.name, retryOf, scopeOf(db, agentId));
  return [
    {
      agentId,
      source: 'task_dispatched',
      taskId: task.taskId,
      goalId: null,
      depth: dispatcher ? dispatcher.depth + 1 : 0,
      by: d.by.key,
      prompt,
    },
  ];
}
