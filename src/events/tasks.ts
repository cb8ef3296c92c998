import type { Event } from './event.js';
import type { Notice } from './notices.js';

/**
 * Tasks (`task-<id>` streams): one aggregate for goal trees (and, later, project tasks). Every status
 * change is its own event carrying `from`, `to` and the goal-channel notice. Spend is a fact too:
 * CostRecorded is appended whatever the budget says — the budget gates work before it starts.
 */
export type TaskStatus =
  | 'proposed' | 'approved' | 'claimed' | 'in_progress' | 'awaiting_verification' | 'done' | 'failed' | 'timeout' | 'cancelled';
export const TASK_STATUSES: readonly TaskStatus[] = [
  'proposed', 'approved', 'claimed', 'in_progress', 'awaiting_verification', 'done', 'failed', 'timeout', 'cancelled',
];
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['done', 'failed', 'timeout', 'cancelled'];

export type VerifierConfig =
  | { kind: 'auto' }
  | { kind: 'peer'; agent_id: number }
  | { kind: 'command'; cmd: string; cwd?: string; timeout_sec?: number };
export type VerifierKind = VerifierConfig['kind'];

export interface HeartbeatConfig { source?: string; interval_sec?: number; max_budget?: number }
export interface AncestryNode { id: number; title: string; acceptance_criteria?: string }
export interface Amount { tokens: number; cents: number }
/** The principal who did something: key (`agent-3`, `user-1`, `system`) and display name. */
export interface By { key: string; name: string }

export type TaskCreated = Event<'TaskCreated', {
  taskId: number;
  goalId: number;
  parentId: number | null;
  depth: number;
  ancestry: AncestryNode[];
  title: string;
  description: string;
  acceptanceCriteria: string;
  billingCode: string;
  budgets: { tokens: number | null; cents: number | null };
  verifier: VerifierConfig;
  heartbeat: HeartbeatConfig | null;
  status: 'approved';
  proposalId: number | null;
  channelId: number;
  by: By;
  notice: Notice;
}>;

export type TaskClaimed = Event<'TaskClaimed', {
  taskId: number;
  agentId: number;
  agentName: string;
  /** The assignee's config hash when it first claimed: the verdict's evidence goes to that config (FR-015 edge case). */
  configHash?: string;
  leaseExpiresAt: string;
  /** True when the assignee renewed its own lease (no status change, no notice). */
  renewed: boolean;
  /** What the claim holds against the goal budget until the task leaves claimed / in_progress. */
  reservation: Amount;
  from: TaskStatus;
  notice: Notice | null;
}>;

export type TaskStarted = Event<'TaskStarted', { taskId: number; agentId: number; from: 'claimed'; notice: Notice }>;

export type TaskCompleted = Event<'TaskCompleted', {
  taskId: number;
  agentId: number;
  summary: string;
  artifactMessageIds: number[];
  from: 'claimed' | 'in_progress';
  notice: Notice;
}>;

export type TaskVerified = Event<'TaskVerified', {
  taskId: number;
  goalId: number;
  verdict: 'approve' | 'reject';
  verifierKind: VerifierKind;
  verifier: By;
  reason: string;
  /** The reputation domain: the task's billing code, else `default`. */
  domain: string;
  assigneeAgentId: number | null;
  /** The config the assignee claimed under (absent for claims recorded without one). */
  assigneeConfigHash?: string;
  /** The command verifier's exit code and last 4 KiB of output; null for other kinds. */
  exitCode: number | null;
  output: string | null;
  to: 'done' | 'failed';
  notice: Notice;
}>;

export type TaskReleased = Event<'TaskReleased', { taskId: number; agentId: number; reason: string; from: TaskStatus; notice: Notice }>;
export type ClaimExpired = Event<'ClaimExpired', { taskId: number; agentId: number; leaseExpiresAt: string; from: TaskStatus; notice: Notice }>;
export type TaskCancelled = Event<'TaskCancelled', { taskId: number; reason: string; from: TaskStatus; by: By; notice: Notice }>;

export type CostRecorded = Event<'CostRecorded', {
  taskId: number;
  goalId: number;
  by: By;
  tokens: number;
  cents: number;
  note: string | null;
  source: 'report_usage' | 'run';
  /** The run it was spent in: the reporter's run that was running (report_usage), or the run itself. Absent before runs existed. */
  runId?: number;
}>;

export type TaskEvent =
  | TaskCreated | TaskClaimed | TaskStarted | TaskCompleted | TaskVerified | TaskReleased | ClaimExpired | TaskCancelled | CostRecorded;

export const taskStream = (taskId: number): string => `task-${taskId}`;
export const ANCESTRY_CAP_BYTES = 16 * 1024;
export const DEFAULT_BILLING_CODE = 'default';
