import type { BreakerKind, BreakerTripped } from '../../events/breakers.js';

/**
 * What the owner is told when a breaker trips (one DM, and a notice in the goal's channel): which
 * breaker, on which goal, why, the evidence in short, and how to lift it. Only Colony's own words and
 * ids: a tool name comes from the tool registry, never from the agent's text.
 */
export const BREAKER_TITLES: Record<BreakerKind, string> = {
  no_progress: 'runs without progress',
  repeated_failure: 'the same call failing',
  wake_depth: 'agents waking each other',
  dependency_cycle: 'a task-dependency cycle',
  wake_rate: 'wake-ups above the hourly cap',
};

export const liftCommand = (agentName: string, goalId: number | null): string =>
  `colony agents resume ${agentName}${goalId === null ? ' --goal none' : ` --goal ${goalId}`}`;

const list = (ids: readonly number[], prefix: string, max = 10): string =>
  ids.length <= max
    ? ids.map((id) => `${prefix}${id}`).join(', ')
    : `${ids
        .slice(0, max)
        .map((id) => `${prefix}${id}`)
        .join(', ')} and ${ids.length - max} more`;

/** The evidence in one line: runs, failed calls (tool, code, how many), tasks. */
export function evidenceSummary(e: BreakerTripped['data']['evidence']): string {
  const parts: string[] = [];
  if (e.runIds.length > 0) parts.push(`runs ${list(e.runIds, '#')}`);
  const calls = e.calls ?? [];
  if (calls.length > 0) {
    const first = calls[0]!;
    parts.push(`${calls.length} calls of ${first.tool} failing with ${first.errorCode}`);
  }
  if (e.taskIds && e.taskIds.length > 0) parts.push(`tasks ${list(e.taskIds, '#')}`);
  return parts.length > 0 ? parts.join('; ') : 'none recorded';
}

export interface TripText {
  agentName: string;
  goal: { goalId: number; title: string } | null;
  trip: BreakerTripped['data'];
}

export function tripMessage({ agentName, goal, trip }: TripText): string {
  const where = goal ? `goal #${goal.goalId} "${goal.title}"` : 'work outside goals';
  return [
    `⛔ Breaker tripped (${trip.breaker}: ${BREAKER_TITLES[trip.breaker]}): agent ${agentName} is paused on ${where}.`,
    `Why: ${trip.reason}`,
    `Evidence: ${evidenceSummary(trip.evidence)} (threshold ${trip.evidence.threshold}).`,
    `Its runs ${goal ? 'on this goal' : 'outside goals'} are refused until you lift it: ${liftCommand(agentName, goal?.goalId ?? null)} (or Resume in the console's Needs you).`,
  ].join('\n');
}
