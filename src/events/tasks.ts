import type { Event } from '../engine/event.js';
import type { BudgetAlert } from './goals.js';
import type { Notice } from './notices.js';
import type { LimitKind, SandboxProfile } from './sandbox.js';
import { type By } from './principals.js';
import type { TaskStatus } from './task-status.js';

/**
 * Tasks (`task-<id>` streams): one aggregate for goal trees and for project tasks (xylocopa's, created
 * `proposed` = INBOX by task_create, with no goal; their notices go to the project's channel). Every
 * status change is its own event carrying `from`, `to` and the channel notice. Spend is a fact too:
 * CostRecorded is appended whatever the budget says — the budget gates work before it starts.
 */
export type VerifierConfig =
  | { kind: 'auto' }
  | { kind: 'peer'; agent_id: number }
  /**
   * A command verifier as approved: the owner's recipe (name and id) with its exact command line, working
   * directory, timeout and granted user-scope secrets copied in. Tasks approved before recipes existed
   * carry only cmd/cwd/timeout_sec; they are never run: only a command the owner registered may run.
   */
  | {
      kind: 'command';
      cmd: string;
      cwd?: string;
      timeout_sec?: number;
      recipe?: string;
      recipeId?: number;
      secrets?: string[];
      /** The recipe may write in its directory (its own only); absent: mounted read-only. */
      writable?: boolean;
    };
export type VerifierKind = VerifierConfig['kind'];
/** Who gave a verdict: the task's configured kind of verifier, or its owner (who may judge any hand-in). */
export type VerdictKind = VerifierKind | 'owner';

export interface HeartbeatConfig {
  source?: string;
  interval_sec?: number;
  max_budget?: number;
}
export interface AncestryNode {
  id: number;
  title: string;
  acceptance_criteria?: string;
}
export interface Amount {
  tokens: number;
  cents: number;
}

/** xylocopa's fields of a project task; absent on goal tasks created before projects existed. */
export interface TaskPlan {
  model: string | null;
  effort: string | null;
  priority: number;
}

export type TaskCreated = Event<
  'TaskCreated',
  {
    taskId: number;
    /** Null for a project task outside any goal. */
    goalId: number | null;
    /** The tenant (absent in events written before project tasks: the goal's owner then). */
    ownerId?: number;
    projectId?: number | null;
    plan?: TaskPlan;
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
    status: 'approved' | 'proposed';
    proposalId: number | null;
    channelId: number;
    by: By;
    notice: Notice;
    /** The tasks (of its goal, or of its project) it waits on: claimable once each is done. Absent: none. */
    blockedBy?: number[];
  }
>;

export type TaskClaimed = Event<
  'TaskClaimed',
  {
    taskId: number;
    agentId: number;
    agentName: string;
    /**
     * The assignee's config hash when it first claimed: the verdict's evidence goes to that config, even if
     * the agent's config changed before the verdict.
     */
    configHash?: string;
    leaseExpiresAt: string;
    /** True when the assignee renewed its own lease (no status change, no notice). */
    renewed: boolean;
    /** What the claim holds against the goal budget until the task leaves claimed / in_progress. */
    reservation: Amount;
    from: TaskStatus;
    notice: Notice | null;
  }
>;

export type TaskStarted = Event<'TaskStarted', { taskId: number; agentId: number; from: 'claimed'; notice: Notice }>;

export type TaskCompleted = Event<
  'TaskCompleted',
  {
    taskId: number;
    agentId: number;
    summary: string;
    artifactMessageIds: number[];
    from: 'claimed' | 'in_progress';
    notice: Notice;
  }
>;

export type TaskVerified = Event<
  'TaskVerified',
  {
    taskId: number;
    goalId: number | null;
    verdict: 'approve' | 'reject';
    verifierKind: VerdictKind;
    verifier: By;
    reason: string;
    /** A command verdict's recipe as the task was approved with it (absent for other kinds and for tasks without one). */
    recipe?: { name: string; id: number | null };
    /** The reputation domain: the task's billing code, else `default`. */
    domain: string;
    assigneeAgentId: number | null;
    /** The config the assignee claimed under (absent for claims recorded without one). */
    assigneeConfigHash?: string;
    /** The command verifier's exit code and last 4 KiB of output; null for other kinds. */
    exitCode: number | null;
    output: string | null;
    /** How the command verifier ran (absent for other kinds, and before confinement existed) and the limit it ran into. */
    sandbox?: SandboxProfile;
    limit?: LimitKind | null;
    /**
     * A rejection of a goal's task: how many its current attempt has had (this one included) and the goal's
     * retry limit then. Absent on approvals, project tasks, and verdicts recorded before the loop existed.
     */
    rejections?: { count: number; limit: number };
    /**
     * A rejection within the limit sends the task back to its assignee (`to: 'claimed'`) with a fresh lease and
     * the claim's reservation; the verdict's reason and output are the feedback its next wake-up shows.
     */
    returned?: { agentId: number; leaseExpiresAt: string; reservation: Amount };
    to: 'done' | 'failed' | 'claimed';
    notice: Notice;
  }
>;

export type TaskReleased = Event<
  'TaskReleased',
  { taskId: number; agentId: number; reason: string; from: TaskStatus; notice: Notice }
>;
export type ClaimExpired = Event<
  'ClaimExpired',
  { taskId: number; agentId: number; leaseExpiresAt: string; from: TaskStatus; notice: Notice }
>;
export type TaskCancelled = Event<
  'TaskCancelled',
  { taskId: number; reason: string; from: TaskStatus; by: By; notice: Notice }
>;

export type CostRecorded = Event<
  'CostRecorded',
  {
    taskId: number;
    goalId: number | null;
    by: By;
    tokens: number;
    cents: number;
    note: string | null;
    source: 'report_usage' | 'run';
    /** The run it was spent in: the reporter's run that was running (report_usage), or the run itself. Absent before runs existed. */
    runId?: number;
  }
>;

/** task_dispatch: proposed (INBOX), failed or timeout → approved (PENDING, claimable); a retry counts as a new attempt. */
export type TaskDispatched = Event<
  'TaskDispatched',
  { taskId: number; from: 'proposed' | 'failed' | 'timeout'; attempt: number; by: By; notice: Notice }
>;

/** task_update: the fields that changed (never the status), with xylocopa's change labels in order. */
export interface TaskChanges {
  title?: string;
  description?: string;
  projectId?: number;
  model?: string;
  effort?: string;
  priority?: number;
}
export type TaskUpdated = Event<'TaskUpdated', { taskId: number; changes: TaskChanges; labels: string[]; by: By }>;

/**
 * set_task_blockers: the task's whole list of blockers now (replacing `previous`; [] clears it), with its
 * goal-channel notice. A list that would close a dependency cycle is never written.
 */
export type TaskBlockersSet = Event<
  'TaskBlockersSet',
  { taskId: number; goalId: number | null; blockedBy: number[]; previous: number[]; by: By; notice: Notice }
>;

/** The assignee's run for the task hit its timeout (xylocopa's TIMEOUT); task_dispatch retries it. */
export type TaskTimedOut = Event<
  'TaskTimedOut',
  { taskId: number; agentId: number; runId: number; reason: string; from: TaskStatus; notice: Notice }
>;

/**
 * A task's own budget (it caps the task's subtree) has 80 % of one dimension spent: the one soft alert per
 * dimension, like the goal's BudgetAlertRaised, with its goal-channel notice. Task budgets never change,
 * so it never re-arms.
 */
export type TaskBudgetAlertRaised = Event<
  'TaskBudgetAlertRaised',
  { taskId: number; goalId: number | null } & BudgetAlert
>; // spent: the subtree's

export type TaskEvent =
  | TaskCreated
  | TaskClaimed
  | TaskStarted
  | TaskCompleted
  | TaskVerified
  | TaskReleased
  | ClaimExpired
  | TaskCancelled
  | CostRecorded
  | TaskDispatched
  | TaskUpdated
  | TaskBlockersSet
  | TaskTimedOut
  | TaskBudgetAlertRaised;

export const taskStream = (taskId: number): string => `task-${taskId}`;
export const ANCESTRY_CAP_BYTES = 16 * 1024;
export const DEFAULT_BILLING_CODE = 'default';
