import type { BudgetDimension } from '../events/goals.js';
import type { AgentRef, By } from '../events/principals.js';
import type { LimitKind, SandboxProfile } from '../events/sandbox.js';
import type { Amount, TaskChanges, TaskCreated, TaskStatus, VerifierConfig } from '../events/tasks.js';

/** The task decider's commands and state (its rules: tasks.ts and task-steps.ts). */
export type CreateTask = { type: 'CreateTask'; task: Omit<TaskCreated['data'], 'notice'> };
export type ClaimTask = {
  type: 'ClaimTask';
  agent: AgentRef & { quarantined: boolean; configHash?: string };
  leaseMs: number;
  reservation: Amount;
  /** The goal's status; null for a project task (no goal). */
  goalStatus: string | null;
};
export type StartTask = { type: 'StartTask'; agent: AgentRef };
export type CompleteTask = { type: 'CompleteTask'; agent: AgentRef; summary: string; artifactMessageIds: number[] };
export type VerifyTask = {
  type: 'VerifyTask';
  verdict: 'approve' | 'reject';
  reason: string;
  verifier: By;
  /** Who is deciding: the configured peer (by agent id), the command runner, or the automatic verifier. */
  as:
    | { kind: 'peer'; agentId: number }
    | { kind: 'command'; exitCode: number | null; output: string; sandbox?: SandboxProfile; limit?: LimitKind | null }
    | { kind: 'auto' };
};
export type ReleaseTask = { type: 'ReleaseTask'; agent: AgentRef; reason: string };
export type ExpireClaim = { type: 'ExpireClaim' };
export type CancelTask = { type: 'CancelTask'; reason: string; by: By };
export type RecordCost = {
  type: 'RecordCost';
  by: By;
  tokens: number;
  cents: number;
  note: string | null;
  source: 'report_usage' | 'run';
  runId?: number;
};
export type DispatchTask = { type: 'DispatchTask'; by: By };
export type UpdateTask = { type: 'UpdateTask'; changes: TaskChanges; labels: string[]; by: By };
export type TimeOutTask = { type: 'TimeOutTask'; agentId: number; runId: number; reason: string };
/** After spend was recorded in its subtree: the task's own budget raises its one 80 % alert (the subtree's spend is the fact). */
export type ApplyTaskSpend = { type: 'ApplyTaskSpend'; spent: Amount };
export type TaskCommand =
  | CreateTask
  | ClaimTask
  | StartTask
  | CompleteTask
  | VerifyTask
  | ReleaseTask
  | ExpireClaim
  | CancelTask
  | RecordCost
  | DispatchTask
  | UpdateTask
  | TimeOutTask
  | ApplyTaskSpend;

export type Task =
  | { status: 'absent' }
  | {
      status: TaskStatus;
      taskId: number;
      goalId: number | null;
      channelId: number;
      title: string;
      billingCode: string;
      verifier: VerifierConfig;
      assignee: (AgentRef & { configHash?: string }) | null;
      leaseExpiresAt: string | null;
      attempt: number;
      budgets: TaskCreated['data']['budgets'];
      alerted: Record<BudgetDimension, boolean>;
    };
export type Live = Exclude<Task, { status: 'absent' }>;
