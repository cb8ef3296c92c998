import { mkdirSync } from 'node:fs';
import type { Command } from 'commander';
import { databaseFile } from '../config.js';
import { action, appStore, checkOwnerName, globals, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/** `colony init`: the data dir, the store, the master and signing keys and the owner — whose token is printed once. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description(
      'create the data dir, the event store, the master key, the signing key and the owner (prints the owner token once)',
    )
    .option('--owner <name>', "the owner's name", 'owner')
    .option(
      '--agent-command <cmd>',
      "the team's default agent command: what Colony runs for the coordinator and agents without their own (colony config set agent-command)",
    )
    .option('--json', 'print {"owner","token"} as JSON')
    .action(action(init));
}

interface InitOptions {
  owner: string;
  agentCommand?: string;
  json?: boolean;
}

async function init(opts: InitOptions, cmd: Command): Promise<void> {
  const g = globals(cmd);
  const { dataDir, durability } = g;
  checkOwnerName(opts.owner);
  if (opts.agentCommand !== undefined) {
    // Before anything is written: a bad command must not leave an owner behind with no way to see its token again.
    const { checkAgentCommand } = await import('../commands/principals.js');
    checkAgentCommand(opts.agentCommand);
  }
  const [{ openApp }, { createOwner, ownerOf, setAgentCommand }] = await Promise.all([
    import('../app.js'),
    import('../actions/principals.js'),
  ]);
  // On SQLite the store makes the data dir with its database; on PostgreSQL the dir holds only the keys,
  // made here (owner-only, like the store's).
  if (g.store !== null) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const app = openApp({ dataDir, durability, store: appStore(g) });
  try {
    const existing = ownerOf(app);
    const agentCommand = (ownerId: number, name: string) =>
      opts.agentCommand === undefined
        ? null
        : setAgentCommand(app, ownerId, opts.agentCommand, { actor: `user:${name}` });
    if (existing)
      return alreadyInitialized(dataDir, existing.name, agentCommand(existing.userId, existing.name), opts.json);
    const { token, userId } = createOwner(app, opts.owner, { actor: 'system' });
    const set = agentCommand(userId, opts.owner);
    const { adoptSigningKey } = await import('../evidence/keys.js');
    const key = adoptSigningKey(app.engine, dataDir);
    if (opts.json)
      return printJson({
        owner: opts.owner,
        token,
        data: dataDir,
        created: true,
        agent_command: set,
        signing_key: key.keyId,
      });
    process.stdout.write(
      `Initialized Colony in ${dataDir}\nOwner "${opts.owner}" token (shown once, keep it): ${token}\n`,
    );
    process.stdout.write(`Signing key of checkpoints and goal bundles: ${key.keyId} (colony key show)\n`);
    process.stdout.write(
      set
        ? `agent-command: ${oneLine(set)}\n`
        : 'No agent command yet: goals wait for an outside coordinator until you set one (colony config set agent-command CMD).\n',
    );
  } finally {
    app.engine.close();
  }
}

/** A second init changes nothing but the agent command it was given; it never makes another owner token. */
function alreadyInitialized(dataDir: string, owner: string, set: string | null, json: boolean | undefined): void {
  if (json)
    return printJson({
      data: dataDir,
      database: databaseFile(dataDir),
      owner,
      created: false,
      ...(set ? { agent_command: set } : {}),
    });
  // Point to the non-destructive command: `token rotate` would revoke every token in use (agents' clients, the console).
  process.stdout.write(
    `Colony is already initialized in ${dataDir} (owner "${owner}"); no new token was made — "colony token create" issues another owner token (existing tokens keep working)\n`,
  );
  if (set) process.stdout.write(`agent-command: ${oneLine(set)}\n`);
}
