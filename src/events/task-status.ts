/**
 * A task's status, and how xylocopa's tools name it. Every status change is its own task event carrying
 * `from` and `to` (events/tasks.ts).
 */
export type TaskStatus =
  | 'proposed'
  | 'approved'
  | 'claimed'
  | 'in_progress'
  | 'awaiting_verification'
  | 'done'
  | 'failed'
  | 'timeout'
  | 'cancelled';
export const TASK_STATUSES: readonly TaskStatus[] = [
  'proposed',
  'approved',
  'claimed',
  'in_progress',
  'awaiting_verification',
  'done',
  'failed',
  'timeout',
  'cancelled',
];
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['done', 'failed', 'timeout', 'cancelled'];

/** xylocopa's status names are a view of Colony's task status: two statuses (claimed, in_progress) show as one. */
export const XYLOCOPA_STATUS: Record<TaskStatus, string> = {
  proposed: 'INBOX',
  approved: 'PENDING',
  claimed: 'EXECUTING',
  in_progress: 'EXECUTING',
  awaiting_verification: 'REVIEW',
  done: 'COMPLETE',
  failed: 'FAILED',
  timeout: 'TIMEOUT',
  cancelled: 'CANCELLED',
};
