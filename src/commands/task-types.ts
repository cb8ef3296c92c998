import type { BudgetDimension } from '../events/goals.js';
import type { AgentRef, By } from '../events/principals.js';
import type { LimitKind, SandboxProfile } from '../events/sandbox.js';
import type { Amount, TaskChanges, TaskCreated, VerifierConfig } from '../events/tasks.js';
import type { TaskStatus } from '../events/task-status.js';
import type { BudgetLine } from './task-budget.js';
import type { BlockerFact } from './task-dependencies.js';

/**
 * The task decider's commands and state (its rules: tasks.ts and the task-*.ts steps). Facts from other
 * streams arrive in the command, read by the caller in the same transaction.
 */
export type CreateTask = { type: 'CreateTask'; task: Omit<TaskCreated['data'], 'notice'> };
export type ClaimTask = {
  type: 'ClaimTask';
  /** The caller as an agent; null when the caller is no agent (an owner acts through its agents). */
  agent: (AgentRef & { quarantined: boolean; configHash?: string }) | null;
  leaseMs: number;
  reservation: Amount;
  /** The goal's status; null for a project task (no goal). */
  goalStatus: string | null;
  /** Fact: the claiming agent is the task's peer verifier, or spawned it, or was spawned by it. */
  inVerifierLineage: boolean;
  /**
   * Fact: the budgets the reservation counts against — the goal's, then each budgeted task from this one
   * up to its root — and the task's own open reservation, which a claim after an expired lease replaces.
   * Null for a project task (it has no goal, so no budget gate), and only for one.
   */
  budget: { lines: BudgetLine[]; replaces: Amount } | null;
  /** Fact: the task's blockers with their statuses now (a new claim waits until each is done). */
  blockers: Pick<BlockerFact, 'taskId' | 'status'>[];
};
/** `byRun`: a run of the agent is starting, which moves on only a task it holds that has not started yet. */
export type StartTask = { type: 'StartTask'; agent: AgentRef | null; byRun?: boolean };
export type CompleteTask = {
  type: 'CompleteTask';
  agent: AgentRef | null;
  summary: string;
  artifactMessageIds: number[];
  /**
   * Fact: the task's goal requires evidence and the task is a leaf (it has no children), so an auto verifier
   * does not decide it: it awaits the owner's verdict.
   */
  ownerVerifies: boolean;
};
export type VerifyTask = {
  type: 'VerifyTask';
  verdict: 'approve' | 'reject';
  reason: string;
  verifier: By;
  /**
   * Who is deciding: the configured peer (by agent id), the command runner, the automatic verifier, or the
   * owner of the task's tenant (`ownerId`, a fact: `verifier` must be that user).
   */
  as:
    | { kind: 'peer'; agentId: number }
    | { kind: 'command'; exitCode: number | null; output: string; sandbox?: SandboxProfile; limit?: LimitKind | null }
    | { kind: 'auto' }
    | { kind: 'owner'; ownerId: number };
  /** Fact: the task's assignee is its peer verifier, or spawned it, or was spawned by it. */
  assigneeInVerifierLineage: boolean;
  /**
   * Fact for a goal's task: the goal's retry limit (rejections that send the task back to its assignee before
   * one fails it), and the lease and reservation the assignee's claim gets back. Null for a project task.
   */
  retry: { limit: number; leaseMs: number; reservation: Amount } | null;
};
export type ReleaseTask = { type: 'ReleaseTask'; agent: AgentRef | null; reason: string };
export type ExpireClaim = { type: 'ExpireClaim' };
/** `ownerId`: the owner of the task's tenant, the one principal who cancels it. */
export type CancelTask = { type: 'CancelTask'; reason: string; by: By; ownerId: number };
export type RecordCost = {
  type: 'RecordCost';
  by: By;
  tokens: number;
  cents: number;
  note: string | null;
  source: 'report_usage' | 'run';
  runId?: number;
  /**
   * Fact for usage someone reports (report_usage): the reporting agent (null: the owner or Colony) and the
   * coordinator of the task's goal (null: a project task). Null for a run's own usage (source `run`),
   * which Colony records when the run ends (and only when it spent something), and only for that.
   */
  reporter: { agentId: number | null; coordinatorAgentId: number | null } | null;
};
export type DispatchTask = { type: 'DispatchTask'; by: By };
export type UpdateTask = { type: 'UpdateTask'; changes: TaskChanges; labels: string[]; by: By };
/**
 * set_task_blockers: the task's whole new list. Facts: the tasks it names as the caller's tenant has them
 * (a missing one is not the tenant's), the dependency graph of the task's goal or project (each task to its
 * blockers), the owner of the tenant and the goal's coordinator (null: a project task).
 */
export type SetTaskBlockers = {
  type: 'SetTaskBlockers';
  blockedBy: number[];
  by: By;
  found: BlockerFact[];
  graph: ReadonlyMap<number, readonly number[]>;
  ownerId: number;
  coordinatorAgentId: number | null;
};
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
  | SetTaskBlockers
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
      /** Rejected hand-ins of this attempt (a dispatch starts a new attempt). */
      rejections: number;
      budgets: TaskCreated['data']['budgets'];
      alerted: Record<BudgetDimension, boolean>;
      projectId: number | null;
      /** Who created it (a principal key): the creator may change its blockers. */
      createdBy: string;
      blockedBy: number[];
    };
export type Live = Exclude<Task, { status: 'absent' }>;
