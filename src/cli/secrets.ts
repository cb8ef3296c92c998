import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { parseScope, RevokeTarget } from '../actions/secrets.js';
import { secretName } from '../commands/secrets.js';
import type { SecretInfo } from '../projections/secrets.js';
import type { UserRow } from '../projections/principal-queries.js';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/**
 * `colony secrets set|list|revoke`. Values are sealed with the master key before they
 * are stored; nothing here ever prints one. Names and scopes are checked before the data dir is opened,
 * so bad input writes nothing.
 */
const ownerSpeaker = (o: UserRow) => ({ key: `user-${o.userId}`, name: o.name, tenant: o.userId });
const actorOf = (o: UserRow) => ({ actor: `user:${o.name}` });
const SCOPE_HELP = 'user:NAME | agent:NAME | task:ID';
// Imported when an action runs (it checks scopes against the store), so that --help stays cheap.
const actions = () => import('../actions/secrets.js');

export function registerSecrets(program: Command): void {
  const secrets = program
    .command('secrets')
    .description('encrypted secrets, injected as environment variables into the processes Colony starts');
  registerSet(secrets);
  registerList(secrets);
  registerRevoke(secrets);
}

function registerSet(secrets: Command): void {
  secrets
    .command('set <name> <value>')
    .description(
      'set (or replace) a secret; VALUE "-" reads it from stdin (one trailing newline dropped), which keeps it out of your shell history; fulfils the pending requests it answers and DMs their requesters',
    )
    .requiredOption('--scope <scope>', SCOPE_HELP)
    .option('--json', 'print {"secret_id","name","scope","replaced","fulfilled_requests"}')
    // A VALUE that starts with "-" is a value, never an unknown option: the parser's error would echo it.
    .allowUnknownOption()
    .action(
      action(async (rawName: string, rawValue: string, opts: { scope: string; json?: boolean }, cmd: Command) => {
        const { parseScope, setSecret } = await actions();
        const name = secretName(rawName);
        parseScope(opts.scope);
        const value = rawValue === '-' ? readStdin() : rawValue;
        return withOwner(cmd, (app, owner) => {
          const r = setSecret(app, ownerSpeaker(owner), { name, value, scope: opts.scope }, actorOf(owner));
          if (opts.json)
            return printJson({
              secret_id: r.secretId,
              name: r.name,
              scope: r.scope.label,
              replaced: r.replaced,
              fulfilled_requests: r.fulfilled,
            });
          const replaced = r.replaced === null ? '' : `, replacing secret ${r.replaced}`;
          const fulfilled =
            r.fulfilled.length === 0
              ? ''
              : `; fulfilled request${r.fulfilled.length > 1 ? 's' : ''} ${r.fulfilled.map((id) => `#${id}`).join(', ')} (requesters told by DM)`;
          process.stdout.write(`Set secret ${r.name} for ${r.scope.label} (id ${r.secretId}${replaced})${fulfilled}\n`);
        });
      }),
    );
}

function registerList(secrets: Command): void {
  secrets
    .command('list')
    .description('list secrets: names, scopes, availability, when set and last used — never values')
    .option('--scope <scope>', `only this scope: ${SCOPE_HELP}`)
    .option('--all', 'include revoked and replaced secrets (history)')
    .option('--json', 'print a JSON array')
    .action(
      action(async (opts: { scope?: string; all?: boolean; json?: boolean }, cmd: Command) => {
        const [{ parseScope, resolveScope }, { listSecrets }] = await Promise.all([
          actions(),
          import('../projections/secrets.js'),
        ]);
        if (opts.scope !== undefined) parseScope(opts.scope);
        return withOwner(cmd, (app, owner) => {
          const scope = opts.scope === undefined ? undefined : resolveScope(app, owner.userId, opts.scope);
          const rows = listSecrets(app.engine.db, owner.userId, { scope, all: opts.all });
          if (opts.json) return printJson(rows.map(view));
          if (rows.length === 0) return void process.stdout.write('No secrets\n');
          for (const s of rows) {
            const state = s.available ? 'available' : `${oneLine(s.revokeReason ?? 'revoked')} ${s.revokedAt}`;
            process.stdout.write(
              `${String(s.secretId).padStart(4)}  ${s.name}  ${s.scopeLabel}  ${state}  set ${s.createdAt}  last used ${s.lastUsedAt ?? 'never'}\n`,
            );
          }
        });
      }),
    );
}

function registerRevoke(secrets: Command): void {
  secrets
    .command('revoke [name]')
    .description(
      'revoke a secret: NAME with --scope (the active one), or --id ID; it is no longer injected anywhere, its history stays',
    )
    .option('--scope <scope>', SCOPE_HELP)
    .option('--id <id>', 'the secret id (see secrets list)')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string | undefined, opts: { scope?: string; id?: string; json?: boolean }, cmd: Command) => {
        const { parseScope, revokeSecret } = await actions();
        const target = revokeTarget(name, opts, parseScope);
        return withOwner(cmd, (app, owner) => {
          const s = revokeSecret(app, ownerSpeaker(owner), target, actorOf(owner));
          if (opts.json)
            return printJson({
              secret_id: s.secretId,
              name: s.name,
              scope: s.scopeLabel,
              status: 'revoked',
              revoked_at: s.revokedAt,
            });
          process.stdout.write(`Revoked secret ${s.secretId} (${s.name}, ${s.scopeLabel})\n`);
        });
      }),
    );
}

const view = (s: SecretInfo) => ({
  id: s.secretId,
  name: s.name,
  scope: s.scopeLabel,
  scope_type: s.scopeType,
  scope_id: s.scopeId,
  available: s.available,
  created_at: s.createdAt,
  last_used_at: s.lastUsedAt,
  revoked_at: s.revokedAt,
});

function revokeTarget(
  name: string | undefined,
  opts: { scope?: string; id?: string },
  checkScope: typeof parseScope,
): RevokeTarget {
  if (opts.id !== undefined) {
    if (name !== undefined || opts.scope !== undefined) throw new CliError('give either --id ID, or NAME with --scope');
    if (!/^\d+$/.test(opts.id) || Number(opts.id) < 1)
      throw new CliError(`--id must be a positive integer, not "${opts.id}"`);
    return { secretId: Number(opts.id) };
  }
  if (name === undefined || opts.scope === undefined) throw new CliError('give NAME with --scope, or --id ID');
  secretName(name);
  checkScope(opts.scope);
  return { name, scope: opts.scope };
}

function readStdin(): string {
  let text: string;
  try {
    text = readFileSync(0, 'utf8');
  } catch (e) {
    throw new CliError(
      `cannot read the value from stdin: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  return text.replace(/\r?\n$/, '');
}
