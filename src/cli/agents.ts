import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { registerAgent } from '../actions/principals.js';
import { TIERS, type Tier } from '../events/principals.js';
import { listAgents } from '../projections/principals.js';
import { action, CliError, printJson } from './shared.js';
import { withOwner } from './owner.js';

/** `colony agents create|list`: root agents owned by the owner. */
export function registerAgents(program: Command): void {
  const agents = program.command('agents').description('agents owned by the owner');
  agents
    .command('create <name>')
    .description('register a root agent and print its token once')
    .requiredOption('--model <model>', 'model the agent runs on, e.g. claude-sonnet-4-5')
    .requiredOption('--prompt-file <file>', 'file holding its system prompt')
    .requiredOption('--tools <list>', 'comma-separated tool names it may call')
    .option('--tier <tier>', `autonomy tier: ${TIERS.join(' | ')}`, 'supervised')
    .option('--command <cmd>', 'the command line Colony runs to start it')
    .option('--json', 'print {"id","name","token"} as JSON')
    .action(action((name: string, opts: CreateOptions, cmd: Command) => {
      const spec = parse(opts);
      return withOwner(cmd, (app, owner) => {
        const agent = registerAgent(app, { ...spec, name, ownerId: owner.userId, parentId: null, spawnDepth: 0 }, { actor: `user:${owner.name}` });
        if (opts.json) return printJson({ id: agent.agentId, name: agent.name, token: agent.token });
        process.stdout.write(`Registered agent "${agent.name}" (id ${agent.agentId}). Its token (shown once): ${agent.token}\n`);
      });
    }));
  agents
    .command('list')
    .description('list the owner\'s agents')
    .option('--json', 'print a JSON array')
    .action(action((opts: { json?: boolean }, cmd: Command) => withOwner(cmd, (app, owner) => {
      const rows = listAgents(app.engine.db, owner.userId);
      if (opts.json) return printJson(rows.map(({ systemPrompt: _p, ...a }) => a));
      if (rows.length === 0) return void process.stdout.write('No agents\n');
      for (const a of rows) process.stdout.write(`${String(a.agentId).padStart(4)}  ${a.name}  ${a.tier}  ${a.model}  ${a.status}${a.quarantined ? '  QUARANTINED' : ''}  tools: ${a.toolScope.join(',')}\n`);
    })));
}

interface CreateOptions { model: string; promptFile: string; tools: string; tier: string; command?: string; json?: boolean }

/** Everything is checked before the data dir is opened, so a bad option writes nothing. */
function parse(opts: CreateOptions) {
  if (!TIERS.includes(opts.tier as Tier)) throw new CliError(`--tier must be one of ${TIERS.join(', ')}, not "${opts.tier}"`);
  const toolScope = [...new Set(opts.tools.split(',').map((t) => t.trim()).filter(Boolean))].sort();
  if (toolScope.length === 0) throw new CliError('--tools must name at least one tool');
  if (!opts.model.trim()) throw new CliError('--model must not be empty');
  let systemPrompt: string;
  try {
    systemPrompt = readFileSync(opts.promptFile, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read --prompt-file ${opts.promptFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!systemPrompt.trim()) throw new CliError(`--prompt-file ${opts.promptFile} is empty`);
  return { model: opts.model.trim(), systemPrompt, toolScope, tier: opts.tier as Tier, command: opts.command ?? null };
}
