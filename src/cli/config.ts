import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';

/**
 * `colony config get|set|unset`: the team's settings. One today, `agent-command`: the backend command
 * line Colony runs for the coordinator and for every agent without its own (`agents create|update
 * --command`), e.g. `claude -p --output-format json --mcp-config "$COLONY_MCP_CONFIG"`.
 */
const KEYS = ['agent-command'] as const;
type Key = (typeof KEYS)[number];

function key(raw: string): Key {
  if ((KEYS as readonly string[]).includes(raw)) return raw as Key;
  throw new CliError(`unknown setting "${oneLine(raw)}" (settings: ${KEYS.join(', ')})`);
}

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description("the team's settings (agent-command: what Colony runs for agents without their own command)");
  config
    .command('get')
    .description('show the settings')
    .option('--json', 'print {"agent_command"} as JSON')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, (_app, owner) => show(owner.agentCommand, opts.json)),
      ),
    );
  config
    .command('set <key> <value>')
    .description("change a setting: agent-command CMD (one line; run by /bin/sh -c in the agent's sandbox)")
    .option('--json', 'print {"agent_command"} as JSON')
    .action(
      action((raw: string, value: string, opts: { json?: boolean }, cmd: Command) => {
        key(raw);
        return withOwner(cmd, async (app, owner) => {
          const { setAgentCommand } = await import('../actions/principals.js');
          show(setAgentCommand(app, owner.userId, value, { actor: `user:${owner.name}` }), opts.json);
        });
      }),
    );
  config
    .command('unset <key>')
    .description(
      'clear a setting (agent-command: agents without their own command are not run; goals wait for an outside coordinator)',
    )
    .option('--json', 'print {"agent_command"} as JSON')
    .action(
      action((raw: string, opts: { json?: boolean }, cmd: Command) => {
        key(raw);
        return withOwner(cmd, async (app, owner) => {
          const { setAgentCommand } = await import('../actions/principals.js');
          show(setAgentCommand(app, owner.userId, null, { actor: `user:${owner.name}` }), opts.json);
        });
      }),
    );
}

function show(agentCommand: string | null, json?: boolean): void {
  if (json) return printJson({ agent_command: agentCommand });
  process.stdout.write(
    `agent-command: ${agentCommand === null ? '(not set: goals wait for an outside coordinator)' : oneLine(agentCommand)}\n`,
  );
}
