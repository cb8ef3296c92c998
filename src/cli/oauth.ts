import type { Command } from 'commander';
import type { App } from '../app.js';
import type { OAuthPrincipal } from '../events/oauth.js';
import type { UserRow } from '../projections/principal-queries.js';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { allVisible as shownClientName, oneLine } from '../terminal.js';

/**
 * `colony oauth approve|deny CODE`, `colony oauth clients [revoke CLIENT_ID]`, `colony oauth revoke
 * GRANT_ID`. The authorization page that shows a code lives in the serving process's memory;
 * this command runs in another process, so it only records the owner's decision (an event): the serving
 * process's waiting page finds it in the log within seconds and sends the application its code. A code
 * that no page shows (mistyped, expired) therefore grants nothing.
 */
const actions = () => import('../actions/oauth.js');
const queries = () => import('../projections/oauth-queries.js');
const by = (o: UserRow) => ({ actor: `user:${o.name}` });

async function userCode(raw: string): Promise<string> {
  const { normalizeUserCode } = await import('../events/oauth.js');
  const code = normalizeUserCode(raw);
  if (!code) throw new CliError(`"${oneLine(raw)}" is not a code like WXYZ-2345 (it is on the authorization page)`);
  return code;
}

async function principalOf(
  app: App,
  owner: UserRow,
  as: string,
): Promise<{ principal: OAuthPrincipal; label: string }> {
  if (as === 'owner' || as === `user:${owner.name}`)
    return { principal: { kind: 'user', id: owner.userId, ownerId: owner.userId }, label: `you (${owner.name})` };
  const m = /^agent:(.+)$/.exec(as);
  if (!m) throw new CliError(`--as is owner or agent:NAME, not "${oneLine(as)}"`);
  const { getAgentByName } = await import('../projections/principal-queries.js');
  const agent = getAgentByName(app.engine.db, owner.userId, m[1]!);
  if (!agent) throw new CliError(`no agent named "${oneLine(m[1]!)}" (colony agents list)`);
  return { principal: { kind: 'agent', id: agent.agentId, ownerId: owner.userId }, label: `agent ${agent.name}` };
}

export function registerOAuth(program: Command): void {
  const oauth = program
    .command('oauth')
    .description('OAuth access of remote MCP clients: approve them, list and revoke their grants');
  registerApprove(oauth);
  registerDeny(oauth);
  registerRevoke(oauth);
  registerClients(oauth);
}

function registerApprove(oauth: Command): void {
  oauth
    .command('approve <code>')
    .description(
      'approve the authorization request showing CODE: the application gets MCP access as you, or as one agent with --as',
    )
    .option('--as <who>', "owner (default) or agent:NAME (that agent's tools only)", 'owner')
    .option('--json', 'print {"approval_id","code","decision","as"}')
    .action(
      action(async (raw: string, opts: { as: string; json?: boolean }, cmd: Command) => {
        const code = await userCode(raw);
        return withOwner(cmd, async (app, owner) => {
          const { principal, label } = await principalOf(app, owner, opts.as);
          const { decideAuthorization } = await actions();
          const { approvalN } = decideAuthorization(
            app,
            {
              decision: 'approve',
              userCode: code,
              via: 'cli',
              decidedBy: { kind: 'user', id: owner.userId },
              principal,
            },
            by(owner),
          );
          if (opts.json) return printJson({ approval_id: approvalN, code, decision: 'approved', as: opts.as });
          process.stdout.write(
            `Approved ${code} as ${label}: the waiting authorization page sends the application on within seconds (no page showing ${code}, no access).\n`,
          );
        });
      }),
    );
}

function registerDeny(oauth: Command): void {
  oauth
    .command('deny <code>')
    .description('deny the authorization request showing CODE')
    .option('--json', 'print {"approval_id","code","decision"}')
    .action(
      action(async (raw: string, opts: { json?: boolean }, cmd: Command) => {
        const code = await userCode(raw);
        return withOwner(cmd, async (app, owner) => {
          const { decideAuthorization } = await actions();
          const { approvalN } = decideAuthorization(
            app,
            {
              decision: 'deny',
              userCode: code,
              via: 'cli',
              decidedBy: { kind: 'user', id: owner.userId },
              principal: null,
            },
            by(owner),
          );
          if (opts.json) return printJson({ approval_id: approvalN, code, decision: 'denied' });
          process.stdout.write(`Denied ${code}.\n`);
        });
      }),
    );
}

function registerRevoke(oauth: Command): void {
  oauth
    .command('revoke <grant>')
    .description('revoke one grant (colony oauth clients lists them): its tokens stop working on the next request')
    .option('--json', 'print {"grant_id","revoked"}')
    .action(
      action(async (raw: string, opts: { json?: boolean }, cmd: Command) => {
        if (!/^\d+$/.test(raw) || Number(raw) < 1)
          throw new CliError(`GRANT_ID is a positive integer, not "${oneLine(raw)}"`);
        return withOwner(cmd, async (app, owner) => {
          const grant = (await queries()).getOAuthGrant(app.engine.db, Number(raw));
          if (!grant || grant.ownerId !== owner.userId) throw new CliError(`no grant ${raw} (colony oauth clients)`);
          const revoked = (await actions()).revokeGrant(app, grant.grantN, 'owner', by(owner));
          if (opts.json) return printJson({ grant_id: grant.grantN, revoked });
          process.stdout.write(
            revoked
              ? `Revoked grant ${grant.grantN} (${oneLine(shownClientName(grant.clientName) || grant.clientId)})\n`
              : `Grant ${grant.grantN} was already revoked\n`,
          );
        });
      }),
    );
}

function registerClients(oauth: Command): void {
  const clients = oauth
    .command('clients')
    .description('list the applications you granted access to, with their grants and whether they still work')
    .option('--json', 'print a JSON array')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const view = await clientViews(app, owner);
          if (opts.json) return printJson(view);
          if (view.length === 0) return void process.stdout.write('No OAuth clients\n');
          for (const c of view) {
            process.stdout.write(
              `${oneLine(c.client_id)}  "${oneLine(shownClientName(c.client_name))}"  ${c.kind === 'dcr' ? 'registered dynamically' : 'metadata document'}  ${c.status}\n`,
            );
            for (const g of c.grants) {
              const state =
                g.status === 'revoked'
                  ? `revoked ${g.revoked_at} (${g.revoke_reason})`
                  : g.status === 'expired'
                    ? `expired ${g.refresh_expires_at}`
                    : `active, renewable until ${g.refresh_expires_at}`;
              process.stdout.write(
                `  grant ${g.grant_id}  as ${g.as}  scope ${g.scopes.join(' ')}  issued ${g.issued_at}  refreshed ${g.refresh_count}x  ${state}\n`,
              );
            }
          }
        }),
      ),
    );
  clients
    .command('revoke <client>')
    .description('revoke every grant of this client (its id as colony oauth clients shows it)')
    .option('--json', 'print {"client_id","revoked_grants"}')
    .action(
      action((clientId: string, opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const known = (await queries()).oauthGrantsOf(app.engine.db, owner.userId, clientId);
          if (known.length === 0)
            throw new CliError(`no client "${oneLine(clientId)}" among your grants (colony oauth clients)`);
          const revoked = (await actions()).revokeClientGrants(app, owner.userId, clientId, by(owner));
          if (opts.json) return printJson({ client_id: clientId, revoked_grants: revoked });
          process.stdout.write(
            revoked.length === 0
              ? `Client ${oneLine(clientId)} had no live grant\n`
              : `Revoked client ${oneLine(clientId)}: grant${revoked.length > 1 ? 's' : ''} ${revoked.join(', ')} (their tokens stop working on the next request)\n`,
          );
        }),
      ),
    );
}

async function clientViews(app: App, owner: UserRow) {
  const { oauthClientViews } = await import('../projections/oauth-views.js');
  return oauthClientViews(app.engine.db, owner.userId, app.engine.clock().toISOString());
}
