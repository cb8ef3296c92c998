import * as z from 'zod';
import { revokeSecret } from '../../actions/secrets.js';
import { MAX_SECRET_NAME } from '../../events/secrets.js';
import { defineTool, type AnyTool } from '../tool.js';
import { speaker } from '../../events/principals.js';

/**
 * The owner's secret tool: revoke_secret. Secrets are set from the CLI only
 * (`colony secrets set`), so a value never travels through MCP arguments or results.
 */
const revoke = defineTool({
  name: 'revoke_secret',
  title: 'Revoke a secret',
  description:
    'Owner only, destructive. Revokes a secret — by secret_id, or the active one named name in scope (user:NAME, agent:NAME or task:ID) — so it is no longer injected into any process Colony starts; its history stays. The first call returns a confirm_token; call again with the same arguments plus confirmation_token within 60 s. Errors: ErrNotFound (no such secret of yours, or no active one of that name in the scope), ErrAlreadyRevoked, ErrInvalidScope, ErrInvalidName, ErrTaskNotFound.',
  trust: 'destructive',
  surface: 'owner',
  module: 'secrets',
  input: z
    .strictObject({
      secret_id: z.number().int().positive().optional().describe('The secret to revoke (see `colony secrets list`)'),
      name: z
        .string()
        .min(1)
        .max(MAX_SECRET_NAME)
        .optional()
        .describe('With scope: revoke the active secret of this name'),
      scope: z.string().min(1).max(200).optional().describe('user:NAME, agent:NAME or task:ID'),
    })
    .refine(
      (a) =>
        (a.secret_id !== undefined) !== (a.name !== undefined && a.scope !== undefined) &&
        (a.name === undefined) === (a.scope === undefined),
      { message: 'give either secret_id, or name and scope' },
    ),
  output: z.object({
    secret_id: z.number().int(),
    name: z.string(),
    scope: z.string(),
    status: z.literal('revoked'),
    revoked_at: z.string(),
  }),
  handler(ctx, a) {
    const target = a.secret_id !== undefined ? { secretId: a.secret_id } : { name: a.name!, scope: a.scope! };
    const s = revokeSecret(ctx.app, speaker(ctx.caller), target, ctx.command);
    return {
      secret_id: s.secretId,
      name: s.name,
      scope: s.scopeLabel,
      status: 'revoked' as const,
      revoked_at: s.revokedAt!,
    };
  },
});

export const secretTools: readonly AnyTool[] = [revoke];
