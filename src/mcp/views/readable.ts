import type { App } from '../../app.js';
import type { Caller } from '../../events/principals.js';
import { descendantsOf } from '../../projections/principal-queries.js';
import type { Readable } from '../../projections/session-queries.js';

/**
 * Whose runs and transcripts a caller may read — one rule for the session tools, the run resources, the
 * console's run page and MCP tasks: the owner all of the team's; an agent its own and those of the agents
 * it spawned (it supervises them) — never a peer's, whose wake prompts hold its DMs and system prompt.
 * Everything else answers as if the session did not exist. `null` means "every run of the tenant".
 */
export const readableBy = (ctx: { readonly app: App; readonly caller: Caller }): Readable =>
  ctx.caller.kind === 'owner' ? null : [ctx.caller.agentId, ...descendantsOf(ctx.app.engine.db, ctx.caller.agentId)];

/** May a caller with this reach read the runs of that agent? */
export const mayReadRunsOf = (readable: Readable, agentId: number): boolean =>
  readable === null || readable.includes(agentId);

/** The same rule for a caller that comes apart from its context (resources, prompts, tasks). */
export const readableRuns = (ctx: { readonly app: App }, caller: Caller): Readable =>
  readableBy({ app: ctx.app, caller });
