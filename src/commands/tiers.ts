import type { Tier } from '../events/principals.js';

/**
 * Autonomy tiers when a proposal is made: what a goal in approval mode `auto` may approve
 * without the owner, by the proposer's tier — rules an owner can predict from the tier alone:
 *
 * - `autonomous`: its task trees and its spawns follow the goal's mode;
 * - `assisted`: its task trees follow the goal's mode; its spawns (`propose_agent`) always wait for the owner;
 * - `supervised`: every proposal it makes waits for the owner, whatever the goal's mode.
 *
 * The owner's own proposals follow the mode (`proposerTier` null). In `human` mode everything waits.
 * `serve --auto-approve` is the owner approving everything, so it approves these too.
 */
export function autoApprovable(
  mode: 'human' | 'auto',
  kind: 'task_tree' | 'agent',
  proposerTier: Tier | null,
): boolean {
  if (mode !== 'auto') return false;
  if (proposerTier === null || proposerTier === 'autonomous') return true;
  return proposerTier === 'assisted' && kind === 'task_tree';
}
