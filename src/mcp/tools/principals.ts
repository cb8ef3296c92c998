import * as z from 'zod';
import { revokeToken } from '../../actions/principals.js';
import { DomainError } from '../../errors.js';
import { getAgent, getToken, listAgents, tokensOf } from '../../projections/principal-queries.js';
import { defineTool, type AnyTool } from '../tool.js';
import { type Caller } from '../../events/principals.js';

/** Identity and tokens: who am I, which tokens exist, and revoking one. */
export const Identity = z.object({
  kind: z.enum(['owner', 'agent']),
  id: z.number().int(),
  name: z.string(),
  token_id: z.number().int(),
  scopes: z.array(z.string()),
  tool_scope: z.array(z.string()).nullable(),
  quarantined: z.boolean(),
});

const whoami = defineTool({
  name: 'whoami',
  title: 'Who am I',
  description:
    'Returns the principal behind your token: owner or agent, id, name, the token id, and — for an agent — its tool scope and whether it is quarantined (a quarantined agent may call only read tools). Use it to check which identity a connection runs as.',
  trust: 'read',
  surface: 'agent',
  module: 'mcp',
  input: z.strictObject({}),
  output: Identity,
  handler: (ctx) => identity(ctx.caller),
});

const TokenInfo = z.object({
  token_id: z.number().int(),
  principal: z.string(),
  label: z.string(),
  scopes: z.array(z.string()),
  issued_at: z.string(),
  revoked_at: z.string().nullable(),
});

const listTokens = defineTool({
  name: 'list_tokens',
  title: 'List tokens',
  description:
    'Lists the API tokens of the owner and of every agent the owner has, without the tokens themselves (only their ids, labels, scopes and dates). Use the token_id with revoke_token.',
  trust: 'read',
  surface: 'owner',
  module: 'mcp',
  input: z.strictObject({ include_revoked: z.boolean().default(false).describe('Also list revoked tokens') }),
  output: z.object({ tokens: z.array(TokenInfo) }),
  handler(ctx, args) {
    if (ctx.caller.kind !== 'owner') throw new DomainError('ErrForbidden', 'only owners list tokens');
    const db = ctx.app.engine.db;
    const mine = tokensOf(db, 'user', ctx.caller.userId).map((t) => ({ t, principal: `user:${ctx.caller.name}` }));
    const agents = listAgents(db, ctx.caller.userId).flatMap((a) =>
      tokensOf(db, 'agent', a.agentId).map((t) => ({ t, principal: `agent:${a.name}` })),
    );
    const tokens = [...mine, ...agents]
      .filter(({ t }) => args.include_revoked || !t.revokedAt)
      .map(({ t, principal }) => ({
        token_id: t.tokenId,
        principal,
        label: t.label,
        scopes: t.scopes,
        issued_at: t.issuedAt,
        revoked_at: t.revokedAt,
      }))
      .sort((a, b) => a.token_id - b.token_id);
    return { tokens };
  },
});

const revoke = defineTool({
  name: 'revoke_token',
  title: 'Revoke a token',
  description:
    "Revokes an API token of one of your agents (or one of your own). The holder's next request is refused with 401. Destructive: the first call returns a confirm_token; call again with the same arguments plus confirmation_token within 60 s. Errors: ErrNotFound (no such token of yours), ErrConfirmationInvalid / ErrConfirmationMismatch (token expired, reused, or for other arguments).",
  trust: 'destructive',
  surface: 'owner',
  module: 'mcp',
  input: z.strictObject({
    token_id: z.number().int().positive().describe('The token to revoke (see list_tokens)'),
    reason: z.string().trim().min(3).max(500).describe('Why, for the audit trail'),
  }),
  output: z.object({ token_id: z.number().int(), principal: z.string(), revoked: z.boolean() }),
  handler(ctx, args) {
    if (ctx.caller.kind !== 'owner') throw new DomainError('ErrForbidden', 'only owners revoke tokens');
    const db = ctx.app.engine.db;
    const token = getToken(db, args.token_id);
    const agent = token?.principalKind === 'agent' ? getAgent(db, token.principalId) : null;
    const owns =
      token &&
      (token.principalKind === 'user' ? token.principalId === ctx.caller.userId : agent?.ownerId === ctx.caller.userId);
    if (!token || !owns)
      throw new DomainError('ErrNotFound', `token ${args.token_id} not found`, { token_id: args.token_id });
    const revoked = revokeToken(
      ctx.app,
      token.principalKind,
      token.principalId,
      token.tokenId,
      args.reason,
      ctx.command,
    );
    return { token_id: token.tokenId, principal: `${token.principalKind}:${agent?.name ?? ctx.caller.name}`, revoked };
  },
});

function identity(caller: Caller): z.infer<typeof Identity> {
  return caller.kind === 'owner'
    ? {
        kind: 'owner',
        id: caller.userId,
        name: caller.name,
        token_id: caller.tokenId,
        scopes: caller.scopes,
        tool_scope: null,
        quarantined: false,
      }
    : {
        kind: 'agent',
        id: caller.agentId,
        name: caller.name,
        token_id: caller.tokenId,
        scopes: caller.scopes,
        tool_scope: caller.toolScope,
        quarantined: caller.quarantined,
      };
}

export const principalTools: readonly AnyTool[] = [whoami, listTokens, revoke];
