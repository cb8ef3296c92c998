import type { Command } from 'commander';
import { action, printJson } from './shared.js';
import { withOwner } from './owner.js';

/** `colony token create|rotate`: owner tokens, printed once. */
export function registerToken(program: Command): void {
  const token = program.command('token').description("the owner's API tokens");
  token
    .command('create')
    .description('issue an additional owner token (printed once)')
    .option('--label <label>', 'what it is for', 'owner token')
    .option('--json', 'print {"owner","token"} as JSON')
    .action(
      action((opts: { label: string; json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const { createToken } = await import('../actions/principals.js');
          const value = createToken(app, 'user', owner.userId, opts.label, ['mcp', 'api'], {
            actor: `user:${owner.name}`,
          });
          print(owner.name, value, opts.json);
        }),
      ),
    );
  token
    .command('rotate')
    .description('revoke every owner token and issue a new one (printed once)')
    .option('--json', 'print {"owner","token"} as JSON')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const { rotateToken } = await import('../actions/principals.js');
          print(owner.name, rotateToken(app, 'user', owner.userId, { actor: `user:${owner.name}` }), opts.json);
        }),
      ),
    );
}

function print(owner: string, token: string, json?: boolean): void {
  if (json) return printJson({ owner, token });
  process.stdout.write(`Owner "${owner}" token (shown once, keep it): ${token}\n`);
}
