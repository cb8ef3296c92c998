import {
  hasTaskClientCapabilityV2,
  TASKS_EXTENSION_ID_V2,
  type CreateTaskResultV2,
  type DetailedTaskV2,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
} from '@modelcontextprotocol/server';

/**
 * The wire of the tasks extension (io.modelcontextprotocol/tasks, SEP-2663, for 2026-07-28), shapes
 * from @modelcontextprotocol/ext-tasks/core/v2: who may use it, the errors it answers, and how a task's
 * state becomes a `tasks/get` answer or the `CreateTaskResult` of the call that started it.
 */
export const TASKS_EXTENSION = TASKS_EXTENSION_ID_V2;

/**
 * Polling hint: a run or a verifier takes seconds to minutes, and every poll is a read of the log.
 * `ttlMs` is null (unlimited): the task is the log's record, which is never discarded.
 */
export const POLL_INTERVAL_MS = 1000;

/** What a task's record says now, before it is given its id. */
export type TaskState =
  | { status: 'working' | 'cancelled'; statusMessage: string; createdAt: string; lastUpdatedAt: string }
  | { status: 'completed'; statusMessage: string; createdAt: string; lastUpdatedAt: string; result: CallToolResult };

/**
 * Did this request declare the extension in its own client capabilities (the 2026-07-28 per-request
 * envelope, `ctx.mcpReq.envelope`)? Only then may a call answer with a task (SEP-2663: never to a
 * request that did not declare it, whatever it declared before).
 */
export const declaresTasks = (envelope: object | undefined): boolean =>
  envelope !== undefined && hasTaskClientCapabilityV2({ _meta: envelope });

/** tasks/get, tasks/update and tasks/cancel from a request that did not declare the extension: -32021, naming it. */
export function requireTasks(envelope: object | undefined): void {
  if (declaresTasks(envelope)) return;
  throw new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `Missing required client capability: the ${TASKS_EXTENSION} extension (declare it in _meta["io.modelcontextprotocol/clientCapabilities"].extensions)`,
  );
}

/** Unknown, unreadable and made-up ids alike: -32602, so an answer never says that someone else's task exists. */
export const taskNotFound = (): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');

/**
 * A `tasks/get` answer (SEP-2663's DetailedTask). A completed task inlines the call's result as the
 * 2026-07-28 wire carries it — with `resultType: "complete"`, as the requester library parses it — and
 * nothing else (no related-task `_meta`: the task id is at the root).
 */
export function detailed(taskId: string, state: TaskState): DetailedTaskV2 {
  const inline = state.status === 'completed' ? { result: { resultType: 'complete', ...state.result } } : {};
  return { taskId, ...state, ...inline, ttlMs: null, pollIntervalMs: POLL_INTERVAL_MS } as DetailedTaskV2;
}

/** The seed a task-augmented call answers: the task as it is now, without its result (that is tasks/get's). */
export function created(task: DetailedTaskV2): CreateTaskResultV2 {
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = task;
  return {
    resultType: 'task',
    taskId,
    status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    createdAt,
    lastUpdatedAt,
    ttlMs,
    ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
  };
}
