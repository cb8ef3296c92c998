/**
 * A notice is the system message a goal or task transition posts to its goal channel: every transition
 * is announced there. It is part of the transition event itself — its message id, its channel and its
 * text are facts decided with the transition — and the channels projection turns it into a message row.
 * So the message is a projection of the event, never a second write that could go missing.
 */
export interface Notice {
  messageId: number;
  channelId: number;
  body: string;
  /** Structured facts for readers and the UI: event, task_id, from, to, actor… */
  metadata: Record<string, unknown>;
}

/** Event types whose data may carry a `notice` (the channels projection handles exactly these). */
export const NOTICE_EVENT_TYPES = [
  'GoalActivated',
  'GoalPaused',
  'GoalResumed',
  'GoalClosed',
  'BudgetAlertRaised',
  'GoalApprovalModeSet',
  'GoalEvidenceRuleSet',
  'TaskCreated',
  'TaskClaimed',
  'TaskStarted',
  'TaskCompleted',
  'TaskVerified',
  'TaskReleased',
  'ClaimExpired',
  'TaskCancelled',
  'TaskDispatched',
  'TaskBlockersSet',
  'TaskTimedOut',
  'TaskBudgetAlertRaised',
] as const;
