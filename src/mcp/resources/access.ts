import { DomainError, isDomainError } from '../../errors.js';
import type { McpContext } from '../context.js';
import { mayReadRunsOf, readableRuns } from '../views/readable.js';
import { getRun } from '../../projections/run-queries.js';
import { parseResourceUri, type ResourceRef } from './uris.js';
import { type Caller } from '../../events/principals.js';
import { speaker } from '../../events/principals.js';

/**
 * Who may read which resource — the read tools' rules, applied through the functions they share:
 *
 * - Tenancy: the caller's tenant (an owner is its own, an agent its owner's); another tenant's goal,
 *   agent or run is "not found", never "forbidden", which would say that it exists.
 * - Runs and transcripts: `readableBy` (views/readable.ts), the session tools' rule — the owner all of
 *   the team's, an agent its own and those of the agents it spawned, never a peer's.
 * - Tool scope: an agent reads a family of resources only when one of the read tools that shows the same
 *   data is in its tool scope, mirroring tools/list (views/visible-tools.ts). Otherwise a resource would
 *   be a side door around the scope its owner chose: an agent limited to claim_task could read every goal.
 *   The scope is checked before any lookup, so a refusal says nothing about whether the resource exists.
 */
export type Family = 'goals' | 'agents' | 'runs';

export const READ_TOOLS: Readonly<Record<Family, readonly string[]>> = {
  goals: ['get_goal'],
  agents: ['agent_get'],
  runs: ['session_read', 'read_session', 'session_tail', 'get_agent_memory'],
};

export const tenantOf = (caller: Caller): number => speaker(caller).tenant;

export const mayRead = (caller: Caller, family: Family): boolean =>
  caller.kind === 'owner' || READ_TOOLS[family].some((t) => caller.toolScope.includes(t));

/** ErrToolNotInScope with the owner's fix, worded like a refused tools/call. */
export function requireFamily(caller: Caller, family: Family, uri: string): void {
  if (mayRead(caller, family) || caller.kind !== 'agent') return;
  const tool = READ_TOOLS[family][0]!;
  const fix = `colony agents update ${caller.name} --tools ${[...caller.toolScope, tool].join(',')}`;
  throw new DomainError(
    'ErrToolNotInScope',
    `reading ${uri} needs ${READ_TOOLS[family].join(' or ')} in the tool scope of agent ${caller.name}; the owner can add it: ${fix}`,
    { uri, tool, tool_scope: caller.toolScope, fix },
  );
}

export const resourceNotFound = (uri: string): DomainError =>
  new DomainError('ErrNotFound', `resource ${uri} not found`, { uri });

/**
 * Runs a read tool's lookup and answers its miss (ErrGoalNotFound, ErrNotFound, …) as the one code
 * resources use, so a client maps every unknown or unseen URI to MCP's "resource not found".
 */
export function orNotFound<T>(uri: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (isDomainError(e) && e.code.endsWith('NotFound')) throw resourceNotFound(uri);
    throw e;
  }
}

/** Which family each kind of resource belongs to (its read tools). */
export const FAMILY_OF: Record<ResourceRef['kind'], Family> = {
  goal: 'goals',
  goal_tree: 'goals',
  agent: 'agents',
  run: 'runs',
  run_transcript: 'runs',
};

/**
 * May the caller read a URI that an event of its own tenant touched (resourceUrisTouchedBy already keeps
 * to one tenant)? The family's scope, and for runs whose runs it may read — without rendering the
 * resource, since a subscription asks this for every event.
 */
export function mayReadTouched(ctx: McpContext, caller: Caller, uri: string): boolean {
  let ref: ResourceRef;
  try {
    ref = parseResourceUri(uri);
  } catch {
    return false;
  }
  if (!mayRead(caller, FAMILY_OF[ref.kind])) return false;
  if (ref.kind !== 'run' && ref.kind !== 'run_transcript') return true;
  const run = getRun(ctx.app.engine.db, ref.runId);
  return run !== null && mayReadRunsOf(readableRuns(ctx, caller), run.agentId);
}
