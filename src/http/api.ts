import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import * as z from 'zod';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { goalFor, resumeGoal } from '../actions/goals.js';
import { reputationOf } from '../actions/reputation.js';
import { resolveScope } from '../actions/secrets.js';
import { secretsOfScope } from '../projections/secrets.js';
import { getAgent } from '../projections/principals.js';
import { DomainError, isDomainError } from '../errors.js';
import { GOAL_STATUSES, type GoalStatus } from '../events/goals.js';
import { actorOf, type Caller } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { speaker } from '../mcp/tools/channels.js';
import { goalList, goalSnapshot } from '../projections/goal-snapshot.js';

/**
 * `/api`: the REST surface for owners and the web UI (seed 000 shapes). Bearer owner tokens with the
 * `api` scope (agent tokens carry only `mcp`: 403). Errors are JSON `{error: {code, message, details}}`
 * with the HTTP status the code implies.
 */
const FAR_FUTURE = Math.floor(Date.UTC(2100, 0, 1) / 1000);
const STATUS: Record<string, number> = {
  ErrInvalidInput: 400, ErrInvalidScope: 400, ErrTaskNotFound: 404, ErrForbidden: 403, ErrGoalNotFound: 404, ErrNotFound: 404, ErrIllegalTransition: 409, ErrGoalBudgetExceeded: 409,
};

/** Path and query integers are plain decimal digits (no `0x10`, `1e1`, ` 5` or `1.0` sneaking through Number()). */
const Digits = z.string().regex(/^\d+$/, 'expected a decimal integer');
const IntParam = (min: number, max: number) => Digits.transform(Number).pipe(z.number().int().min(min).max(max));
const ListQuery = z.strictObject({
  status: z.enum(GOAL_STATUSES as [GoalStatus, ...GoalStatus[]]).optional(),
  limit: IntParam(1, 200).default(50),
  offset: IntParam(0, Number.MAX_SAFE_INTEGER).default(0),
});
const ResumeBody = z.strictObject({
  new_budget_dollars_cents: z.number().int().min(0).optional(),
  new_budget_tokens: z.number().int().min(0).optional(),
});
const Id = IntParam(1, Number.MAX_SAFE_INTEGER);

export function mountApi(app: Express, ctx: McpContext): void {
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const caller = ctx.auth.authenticate(token);
      if (!caller) throw new InvalidTokenError('unknown or revoked token');
      return { token, clientId: actorOf(caller), scopes: caller.scopes, expiresAt: FAR_FUTURE, extra: { caller } };
    },
  };
  const router = express.Router();
  router.use(requireBearerAuth({ verifier, requiredScopes: ['api'] }), express.json({ limit: '1mb' }));
  const caller = (req: Request): Caller => req.auth!.extra!.caller as Caller;
  const db = ctx.app.engine.db;

  router.get('/goals', (req, res) => {
    const q = parse(ListQuery, req.query, 'query');
    const { goals, total } = goalList(db, speaker(caller(req)).tenant, { status: q.status ?? null, limit: q.limit, offset: q.offset });
    res.json({ goals: goals.map((v) => {
      return { ...v, cost_totals: { tokens: v.spent_tokens, dollars_cents: v.spent_dollars_cents } };
    }), total, limit: q.limit, offset: q.offset });
  });
  router.get('/goals/:id', (req, res) => {
    const id = parse(Id, req.params.id, 'id');
    goalFor(ctx.app, speaker(caller(req)), id);
    res.json(goalSnapshot(db, id));
  });
  router.post('/goals/:id/resume', (req, res) => {
    const id = parse(Id, req.params.id, 'id');
    const body = parse(ResumeBody, req.body ?? {}, 'body');
    const c = caller(req);
    const g = resumeGoal(ctx.app, speaker(c), id, { tokens: body.new_budget_tokens, cents: body.new_budget_dollars_cents }, { actor: actorOf(c) });
    res.json({ goal_id: g.goalId, status: g.status });
  });
  router.get('/agents/:id/reputation', (req, res) => {
    const id = parse(Id, req.params.id, 'id');
    const agent = getAgent(db, id);
    if (!agent || agent.ownerId !== speaker(caller(req)).tenant) throw new DomainError('ErrNotFound', `agent ${id} not found`, { agent_id: id });
    const r = reputationOf(ctx.app, agent);
    res.json({ config_hash: r.configHash, rolling_score: r.rollingScore, evidence_count: r.evidenceCount, last_evidence_at: r.lastEvidenceAt,
      quarantined: r.quarantined, domains: r.domains.map((d) => ({ domain: d.domain, score: d.score, evidence_count: d.evidenceCount, last_evidence_at: d.lastEvidenceAt })) });
  });
  router.get('/secrets/:scope_type/:scope_id', (req, res) => {
    const tenant = speaker(caller(req)).tenant;
    const scope = resolveScope(ctx.app, tenant, `${req.params.scope_type}:${req.params.scope_id}`);
    res.json(secretsOfScope(db, tenant, scope).map((s) => ({ name: s.name, available: s.available, last_used_at: s.lastUsedAt })));
  });
  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (!isDomainError(err)) return next(err);
    res.status(STATUS[err.code] ?? 409).json({ error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } });
  });
  app.use('/api', router);
}

function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const at = [where, ...issue.path.map(String)].join('.');
  throw new DomainError('ErrInvalidInput', `${at}: ${issue.message}`, { field: at });
}
