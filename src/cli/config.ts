import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Runtime } from '../events/principals.js';
import type { UserRow } from '../projections/principal-queries.js';
import { withOwner } from './owner.js';
import { checkRuntime, parseRuntime } from './runtime-check.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';
import type { App } from '../app.js';

/**
 * `colony config get|set|unset`: the team's settings.
 * - `agent-runtime`: what Colony launches agents with that have no runtime or command of their own —
 *   claude-code, codex, opencode (Colony builds the launch line: runtime/adapters/) or command;
 * - `agent-command`: the `sh -c` line of the `command` runtime for agents without their own;
 * - `rate-card`: a JSON file of model → dollars per million tokens, pricing runs whose CLI reports no cost.
 */
const KEYS = ['agent-runtime', 'agent-command', 'rate-card'] as const;
type Key = (typeof KEYS)[number];

function key(raw: string): Key {
  if ((KEYS as readonly string[]).includes(raw)) return raw as Key;
  throw new CliError(`unknown setting "${oneLine(raw)}" (settings: ${KEYS.join(', ')})`);
}

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description(
      "the team's settings: agent-runtime, agent-command, rate-card (what Colony runs agents with, and prices)",
    );
  config
    .command('get')
    .description('show the settings')
    .option('--json', 'print {"agent_runtime","agent_command","rate_card"} as JSON')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, (app, owner) => show(app, owner.userId, opts.json)),
      ),
    );
  config
    .command('set <key> <value>')
    .description(
      'change a setting: agent-runtime claude-code|codex|opencode|command; agent-command CMD (one line, run by /bin/sh -c in the agent\'s sandbox); rate-card FILE (JSON: {"model":{"input":3,"output":15,"cached_input":0.3}} dollars per million tokens)',
    )
    .option('--json', 'print the settings as JSON')
    .action(
      action((raw: string, value: string, opts: { json?: boolean }, cmd: Command) => {
        const k = key(raw);
        const runtime = k === 'agent-runtime' ? parseRuntime(value, 'agent-runtime')! : null;
        const rates = k === 'rate-card' ? readRateCard(value) : null;
        return withOwner(cmd, async (app, owner) => {
          if (runtime) await checkTeamRuntime(app, owner, runtime);
          await set(app, owner, k, k === 'agent-runtime' ? runtime : k === 'rate-card' ? rates : value);
          await show(app, owner.userId, opts.json);
        });
      }),
    );
  config
    .command('unset <key>')
    .description(
      'clear a setting (agent-runtime and agent-command: agents without their own are not run, and goals wait for an outside coordinator; rate-card: costs CLIs do not report stay unknown)',
    )
    .option('--json', 'print the settings as JSON')
    .action(
      action((raw: string, opts: { json?: boolean }, cmd: Command) => {
        const k = key(raw);
        return withOwner(cmd, async (app, owner) => {
          await set(app, owner, k, k === 'rate-card' ? {} : null);
          await show(app, owner.userId, opts.json);
        });
      }),
    );
}

async function set(app: App, owner: UserRow, k: Key, value: unknown): Promise<void> {
  const p = await import('../actions/principals.js');
  const by = { actor: `user:${owner.name}` };
  if (k === 'agent-command') p.setAgentCommand(app, owner.userId, value as string | null, by);
  else if (k === 'agent-runtime') p.setAgentRuntime(app, owner.userId, value as Runtime | null, by);
  else p.setRateCard(app, owner.userId, value as Record<string, unknown>, by);
}

/** The runtime's CLI is found, and it takes the model of every agent that follows the team's runtime. */
async function checkTeamRuntime(app: App, owner: UserRow, runtime: Runtime): Promise<void> {
  const [{ listAgents }, { COORDINATOR_MODEL, COORDINATOR_NAME }] = await Promise.all([
    import('../projections/principal-queries.js'),
    import('../actions/coordinator.js'),
  ]);
  // Colony's default coordinator has a placeholder model: under a CLI it runs on the CLI's default model.
  const followers = listAgents(app.engine.db, owner.userId).filter(
    (a) =>
      a.ownRuntime === null && a.ownCommand === null && !(a.name === COORDINATOR_NAME && a.model === COORDINATOR_MODEL),
  );
  await checkRuntime(
    runtime,
    followers.map((a) => ({ agent: a.name, model: a.model })),
    owner.agentCommand !== null,
  );
}

function readRateCard(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read rate-card ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CliError(`rate-card ${file} is not JSON: ${(e as Error).message}`);
  }
}

async function show(app: App, userId: number, json?: boolean): Promise<void> {
  const { getUser, rateCardOf } = await import('../projections/principal-queries.js');
  const u = getUser(app.engine.db, userId)!;
  const card = rateCardOf(app.engine.db, userId);
  if (json) return printJson({ agent_runtime: u.agentRuntime, agent_command: u.agentCommand, rate_card: card });
  const models = Object.keys(card);
  process.stdout.write(
    [
      `agent-runtime: ${u.agentRuntime ?? (u.agentCommand ? 'command (the agent-command below)' : '(not set: goals wait for an outside coordinator)')}`,
      `agent-command: ${u.agentCommand === null ? '(not set)' : oneLine(u.agentCommand)}`,
      `rate-card: ${models.length === 0 ? '(none: costs a CLI does not report stay unknown)' : models.map((m) => oneLine(m)).join(', ')}`,
      '',
    ].join('\n'),
  );
}
