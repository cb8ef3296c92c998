import express, { type Express, type Response } from 'express';
import { log } from '../log.js';
import type { McpContext } from '../mcp/context.js';
import { apiAuth } from './api-auth.js';
import { domainErrors } from './api-common.js';
import { mountAgentControls } from './api-agent-controls.js';
import { mountBreakers } from './api-breakers.js';
import { mountAttention } from './api-attention.js';
import { mountAgents } from './api-agents.js';
import { mountGoals } from './api-goals.js';
import { mountFork } from './api-fork.js';
import { mountIntegrity } from './api-integrity.js';
import { mountOAuthApi } from './api-oauth.js';
import { mountProposals } from './api-proposals.js';
import { mountRequests } from './api-requests.js';
import { mountRuns } from './api-runs.js';
import { mountTasks } from './api-tasks.js';
import { mountVerdicts } from './api-verdicts.js';
import { mountEvents } from './events.js';
import type { OAuthDesk } from './oauth-desk.js';
import { mountSessionInfo, mountSignIn, SessionStore, SignInBackoff } from './session.js';

/**
 * `/api`: the REST surface behind the web console and for programs. Programs send
 * `Authorization: Bearer <owner token>` (the `api` scope); the console signs in once (`POST /api/session`)
 * and then sends its session cookie, with `X-CSRF-Token` on every request that changes anything
 * (api-auth.ts). Reads are the caller's tenant's, as its read tools would show them; actions are the
 * owner's (an agent's session gets 403 ErrForbidden). Each action is one command. Errors are JSON
 * `{error: {code, message, details}}` with the HTTP status the code implies (api-common.ts). Routes by
 * domain: api-attention (the owner's "Needs you"), api-goals, api-tasks, api-proposals, api-agents, api-runs, api-agent-controls, api-requests,
 * api-integrity, api-oauth; sessions: session.ts; the event stream GET /api/events: events.ts.
 */
export interface ApiOptions {
  sessions?: SessionStore;
  signInBackoff?: SignInBackoff;
  /** OAuth's pending requests, owned by mountOAuth (oauth.ts): with it, `/api/oauth/*` is mounted. */
  oauth?: OAuthDesk;
}

/**
 * What an answer read may include a batch that is open or committed but not yet on disk (engine/wal-sync.ts):
 * its JSON leaves once that is — at once when nothing waits, which is nearly always.
 */
function answerWhenDurable(ctx: McpContext, res: Response): void {
  const json = res.json.bind(res);
  res.json = (body?: unknown) => {
    const durable = ctx.app.engine.group.visible();
    if (!durable) return json(body);
    durable.then(() => json(body)).catch((err: unknown) => log.error({ err }, 'an API answer could not be sent')); // never an unhandled rejection
    return res;
  };
}

export function mountApi(app: Express, ctx: McpContext, options: ApiOptions = {}): { close(): void } {
  const sessions = options.sessions ?? new SessionStore();
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    answerWhenDurable(ctx, res);
    next();
  });
  mountSignIn(router, ctx, sessions, options.signInBackoff ?? new SignInBackoff());
  router.use(apiAuth(ctx, sessions), express.json({ limit: '1mb' }));
  mountSessionInfo(router, sessions, ctx);
  const events = mountEvents(router, ctx);
  mountAttention(router, ctx, options.oauth);
  mountGoals(router, ctx);
  mountFork(router, ctx);
  mountTasks(router, ctx);
  mountVerdicts(router, ctx);
  mountProposals(router, ctx);
  mountAgents(router, ctx);
  mountRuns(router, ctx);
  mountAgentControls(router, ctx);
  mountBreakers(router, ctx);
  mountRequests(router, ctx);
  mountIntegrity(router, ctx);
  if (options.oauth) mountOAuthApi(router, ctx, options.oauth);
  router.use(domainErrors);
  app.use('/api', router);
  return { close: () => events.close() };
}
