import type { Event } from '../engine/event.js';
import type { Notice } from './notices.js';

/**
 * Goals (`goal-<id>` streams): a human owner's objective with its `#goal-<slug>` channel, coordinator,
 * budgets and lifecycle. Spend itself is recorded on task streams (CostRecorded); the goal stream holds
 * what spend caused — the one soft alert per budget and the pause — decided from the spend totals the
 * command looked up inside the same transaction.
 */
export type GoalStatus = 'draft' | 'active' | 'paused' | 'completed' | 'cancelled' | 'stuck';
export const GOAL_STATUSES: readonly GoalStatus[] = ['draft', 'active', 'paused', 'completed', 'cancelled', 'stuck'];
export type ApprovalMode = 'human' | 'auto';
export type BudgetDimension = 'tokens' | 'cents';
export type ClosingStatus = 'completed' | 'stuck' | 'cancelled';

export interface Budgets {
  tokens: number | null;
  cents: number | null;
}

export type GoalCreated = Event<
  'GoalCreated',
  {
    goalId: number;
    ownerId: number;
    slug: string;
    title: string;
    description: string;
    channelId: number;
    coordinatorAgentId: number;
    coordinatorTemplate: string;
    budgets: Budgets;
    maxSpawnDepth: number;
    approvalMode: ApprovalMode;
    /**
     * Done only with evidence: a leaf is done only by a verdict from someone other than its author (a recipe, a
     * peer outside its lineage, or the owner). Absent on goals created before the rule existed: off.
     */
    requireEvidence?: boolean;
    /** How many rejected hand-ins go back to the assignee before the next one fails the task. Absent (older goals): 0. */
    maxRejections?: number;
    by: string;
  }
>;

export type GoalActivated = Event<
  'GoalActivated',
  { goalId: number; from: 'draft'; proposalId: number | null; notice: Notice }
>;

export type GoalPaused = Event<
  'GoalPaused',
  {
    goalId: number;
    from: GoalStatus;
    reason: 'budget';
    dimension: BudgetDimension;
    spent: number;
    /** What the refused work would have added on top of the spend (0 when the spend itself crossed). */
    requested: number;
    budget: number;
    notice: Notice;
  }
>;

export type GoalResumed = Event<
  'GoalResumed',
  {
    goalId: number;
    from: GoalStatus;
    budgets: Budgets;
    /** Per dimension: the 80 % alert may fire again (spend is below 80 % of the new budget). */
    rearm: Record<BudgetDimension, boolean>;
    notice: Notice;
  }
>;

export type GoalClosed = Event<
  'GoalClosed',
  { goalId: number; from: GoalStatus; to: ClosingStatus; summary: string; by: string; notice: Notice }
>;

/** A one-time soft alert at 80 % of a budget in one dimension, with its goal-channel notice (goals and tasks alike). */
export interface BudgetAlert {
  dimension: BudgetDimension;
  spent: number;
  budget: number;
  percent: number;
  notice: Notice;
}

export type BudgetAlertRaised = Event<'BudgetAlertRaised', { goalId: number } & BudgetAlert>;

/** The owner switched how the goal's proposals are approved (only the owner may choose auto). */
export type GoalApprovalModeSet = Event<
  'GoalApprovalModeSet',
  { goalId: number; from: ApprovalMode; to: ApprovalMode; by: string; notice: Notice }
>;

/** The evidence rule of a goal as it stands. */
export interface EvidenceRule {
  requireEvidence: boolean;
  maxRejections: number;
}
export const DEFAULT_MAX_REJECTIONS = 2;
export const MAX_REJECTIONS_CAP = 10;

/**
 * The owner changed the goal's evidence rule (goal-evidence.ts): whether leaves need a verdict that counts,
 * and the retry limit of rejected hand-ins. Turning it on reopens nothing already done.
 */
export type GoalEvidenceRuleSet = Event<
  'GoalEvidenceRuleSet',
  { goalId: number; from: EvidenceRule; to: EvidenceRule; by: string; notice: Notice }
>;

export type GoalEvent =
  | GoalCreated
  | GoalActivated
  | GoalPaused
  | GoalResumed
  | GoalClosed
  | BudgetAlertRaised
  | GoalApprovalModeSet
  | GoalEvidenceRuleSet;

export const goalStream = (goalId: number): string => `goal-${goalId}`;
export const goalChannelName = (slug: string): string => `goal-${slug}`;
