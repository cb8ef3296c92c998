import { DomainError, invalidInput } from '../errors.js';
import type { TaskStatus } from '../events/task-status.js';

/**
 * Task dependencies, pure: a task may be blocked by other tasks of its own goal (a project task: of its
 * own project), and is claimable only once every blocker is done. The graph maps a task to the tasks it
 * waits on; a write that would close a cycle in it is refused with the cycle, because a cycle is work
 * that waits on itself for ever. Keys are task ids, or node paths in a proposed tree before it has ids.
 */
export const MAX_BLOCKERS = 32;

export type DependencyGraph<K> = ReadonlyMap<K, readonly K[]>;

/** A task named as a blocker, as the caller's tenant has it; a name missing from the facts is no task of the tenant. */
export interface BlockerFact {
  taskId: number;
  title: string;
  status: TaskStatus;
  goalId: number | null;
  projectId: number | null;
}

/**
 * The cycle that giving `task` the blockers `blockedBy` would close, in order — each waits on the next, the
 * last is `task` again — or null. Breadth first from the new blockers, so the cycle reported is a shortest one.
 */
export function cycleThrough<K>(graph: DependencyGraph<K>, task: K, blockedBy: readonly K[]): K[] | null {
  const cameFrom = new Map<K, K>();
  const queue: K[] = [];
  for (const b of blockedBy) {
    if (cameFrom.has(b)) continue;
    cameFrom.set(b, task);
    queue.push(b);
  }
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    if (node === task) return pathBack(cameFrom, task);
    for (const next of graph.get(node) ?? []) {
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, node);
      queue.push(next);
    }
  }
  return null;
}

/** [task, first blocker, …, task]: the chain from `task` through its blockers back to itself. */
function pathBack<K>(cameFrom: ReadonlyMap<K, K>, task: K): K[] {
  const back: K[] = [task];
  let node = cameFrom.get(task)!;
  while (node !== task) {
    back.push(node);
    node = cameFrom.get(node)!;
  }
  back.push(task);
  return back.reverse();
}

/** Some cycle of the whole graph in order (its first node repeated at the end), or null: iterative depth-first search. */
export function anyCycle<K>(graph: DependencyGraph<K>): K[] | null {
  const state = new Map<K, 'open' | 'closed'>();
  for (const start of graph.keys()) {
    if (state.has(start)) continue;
    const stack: { node: K; next: number }[] = [{ node: start, next: 0 }];
    state.set(start, 'open');
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      const edges = graph.get(top.node) ?? [];
      if (top.next >= edges.length) {
        state.set(top.node, 'closed');
        stack.pop();
        continue;
      }
      const child = edges[top.next++]!;
      if (state.get(child) === 'open') {
        const from = stack.findIndex((f) => f.node === child);
        return [...stack.slice(from).map((f) => f.node), child];
      }
      if (!state.has(child)) {
        state.set(child, 'open');
        stack.push({ node: child, next: 0 });
      }
    }
  }
  return null;
}

/** The refusal of a write that would close `cycle`; `show` names a key (`#5`, or a node's path). */
export function dependencyCycle<K>(cycle: readonly K[], show: (k: K) => string): DomainError {
  return new DomainError(
    'ErrDependencyCycle',
    `this would close a dependency cycle: ${cycle.map(show).join(' waits on ')}. A cycle of blockers never ends; nothing was written`,
    { cycle: [...cycle] },
  );
}

/** The list's own problems: too many, a task twice, the task itself (a node's own path). */
export function checkBlockerList<K>(self: K | null, blockedBy: readonly K[], field: string, show: (k: K) => string) {
  if (blockedBy.length > MAX_BLOCKERS)
    throw invalidInput(`${field}: a task waits on at most ${MAX_BLOCKERS} blockers; got ${blockedBy.length}`, {
      field,
      count: blockedBy.length,
      max: MAX_BLOCKERS,
    });
  const seen = new Set<K>();
  for (const b of blockedBy) {
    if (b === self) throw invalidInput(`${field}: a task cannot be blocked by itself (${show(b)})`, { field });
    if (seen.has(b)) throw invalidInput(`${field} names ${show(b)} twice`, { field });
    seen.add(b);
  }
}

/**
 * Each blocker is a task of the caller's tenant (present in `found`) in the same goal as the task — or,
 * for a project task, the same project — else the write is refused naming it.
 */
export function checkBlockerScope(
  blockedBy: readonly number[],
  found: readonly BlockerFact[],
  scope: { goalId: number | null; projectId: number | null },
  field: string,
): void {
  for (const id of blockedBy) {
    const b = found.find((f) => f.taskId === id);
    if (!b) throw new DomainError('ErrTaskNotFound', `${field}: task ${id} not found`, { field, task_id: id });
    const same =
      scope.goalId !== null ? b.goalId === scope.goalId : b.goalId === null && b.projectId === scope.projectId;
    if (same) continue;
    const where = (g: number | null, p: number | null) =>
      g !== null ? `goal #${g}` : p !== null ? `project #${p}` : 'no project';
    throw invalidInput(
      `${field}: task #${id} is in ${where(b.goalId, b.projectId)}, not in ${where(scope.goalId, scope.projectId)}: a task is blocked only by tasks of its own ${scope.goalId !== null ? 'goal' : 'project'}`,
      { field, task_id: id },
    );
  }
}

/** The blockers that are not done yet, from the facts about them. */
export const waitingOn = (found: readonly Pick<BlockerFact, 'taskId' | 'status'>[]): typeof found =>
  found.filter((b) => b.status !== 'done');

/** A claim on a task whose blockers are not all done. */
export function taskBlocked(taskId: number, waiting: readonly Pick<BlockerFact, 'taskId' | 'status'>[]): DomainError {
  const list = waiting.map((b) => `#${b.taskId} (${b.status})`).join(', ');
  return new DomainError(
    'ErrTaskBlocked',
    `task ${taskId} is blocked by ${list}: it can be claimed once every blocker is done`,
    { task_id: taskId, blocked_by: waiting.map((b) => ({ task_id: b.taskId, status: b.status })) },
  );
}
