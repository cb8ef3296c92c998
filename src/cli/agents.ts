import type { Command } from 'commander';
import { RUNTIMES, TIERS } from '../events/principals.js';
import { checkRuntime } from './runtime-check.js';
import { checkedTools, parseCreate, parseUpdate, type CreateOptions, type UpdateOptions } from './agent-options.js';
import { registerAgentList, registerAgentShow } from './agent-show.js';
import { withAgent, withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';

/**
 * `colony agents create|list|show|update|token|unquarantine`: the owner's agents (list and show:
 * agent-show.ts; wake, stop, start and runtime: agent-runtime.ts). What an action needs is imported when
 * it runs, so that defining these commands (and --help) stays cheap.
 */
export function registerAgents(program: Command): Command {
  const agents = program.command('agents').description('agents owned by the owner');
  registerCreate(agents);
  registerAgentList(agents);
  registerAgentShow(agents);
  registerUpdate(agents);
  registerToken(agents);
  registerUnquarantine(agents);
  return agents;
}

function registerCreate(agents: Command): void {
  agents
    .command('create <name>')
    .description('register a root agent and print its token once')
    .requiredOption('--model <model>', 'model the agent runs on, e.g. claude-sonnet-4-5')
    .requiredOption('--prompt-file <file>', 'file holding its system prompt')
    .requiredOption(
      '--tools <list>',
      'comma-separated agent tools it may call (checked: a typo or an owner-only tool is refused)',
    )
    .option('--tier <tier>', `autonomy tier: ${TIERS.join(' | ')}`, 'supervised')
    .option('--command <cmd>', 'the command line Colony runs to start it (runtime command)')
    .option('--runtime <runtime>', `what Colony launches it with: ${RUNTIMES.join(' | ')} (default: the team's)`)
    .option('--json', 'print {"id","name","token"} as JSON')
    .action(
      action(async (name: string, opts: CreateOptions, cmd: Command) => {
        const spec = parseCreate(opts);
        const known = await checkedTools(spec.toolScope);
        return withOwner(cmd, async (app, owner) => {
          const runtime = spec.runtime ?? (spec.command ? 'command' : owner.agentRuntime);
          if (runtime)
            await checkRuntime(
              runtime,
              [{ agent: name, model: spec.model }],
              Boolean(spec.command ?? owner.agentCommand),
            );
          const { registerAgent } = await import('../actions/principals.js');
          const agent = registerAgent(
            app,
            { ...spec, name, ownerId: owner.userId, parentId: null, spawnDepth: 0 },
            { actor: `user:${owner.name}` },
            known,
          );
          if (opts.json) return printJson({ id: agent.agentId, name: agent.name, token: agent.token });
          process.stdout.write(
            `Registered agent "${agent.name}" (id ${agent.agentId}). Its token (shown once): ${agent.token}\n`,
          );
        });
      }),
    );
}

function registerUpdate(agents: Command): void {
  agents
    .command('update <name>')
    .description("change an agent's config; a new config hash starts at 70 % of the old one's reputation per domain")
    .option('--model <model>', 'model')
    .option('--prompt-file <file>', 'file holding the new system prompt')
    .option('--tools <list>', "comma-separated agent tools it may call, replacing its scope (checked like create's)")
    .option('--skills <list>', 'comma-separated skills')
    .option('--subagents <list>', 'comma-separated subagents')
    .option('--tier <tier>', `autonomy tier: ${TIERS.join(' | ')}`)
    .option('--command <cmd>', 'the command line Colony runs to start it (runtime command)')
    .option('--runtime <runtime>', `what Colony launches it with: ${RUNTIMES.join(' | ')}`)
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, opts: UpdateOptions, cmd: Command) => {
        const changes = parseUpdate(opts);
        const known = changes.toolScope === undefined ? undefined : await checkedTools(changes.toolScope);
        return withAgent(cmd, name, async (app, owner, agent) => {
          const runtime = changes.runtime ?? (changes.command ? 'command' : agent.runtime);
          if (
            runtime &&
            (changes.runtime !== undefined || changes.model !== undefined || changes.command !== undefined)
          )
            await checkRuntime(
              runtime,
              [{ agent: name, model: changes.model ?? agent.model }],
              Boolean(changes.command ?? agent.command),
            );
          const { updateAgent } = await import('../actions/agents.js');
          const r = updateAgent(app, owner.userId, agent.agentId, changes, { actor: `user:${owner.name}` }, known);
          if (opts.json)
            return printJson({
              id: r.agent.agentId,
              name,
              config_hash: r.agent.configHash,
              previous_hash: agent.configHash,
              hash_changed: r.hashChanged,
            });
          process.stdout.write(
            r.hashChanged
              ? `Updated ${name}: config hash ${agent.configHash.slice(0, 12)}… → ${r.agent.configHash.slice(0, 12)}…\n`
              : `Updated ${name} (config hash unchanged)\n`,
          );
        });
      }),
    );
}

function registerToken(agents: Command): void {
  agents
    .command('token <name>')
    .description(
      "print an agent's token (Colony keeps it sealed under the master key); --rotate revokes it and issues a new one",
    )
    .option('--rotate', 'revoke every token of the agent and issue a new one')
    .option('--json', 'print {"id","name","token"}')
    .action(
      action((name: string, opts: { rotate?: boolean; json?: boolean }, cmd: Command) =>
        withAgent(cmd, name, async (app, owner, agent) => {
          const [{ sealedTokenOf }, { rotateToken }, { unseal }] = await Promise.all([
            import('../projections/principal-queries.js'),
            import('../actions/principals.js'),
            import('../masterkey.js'),
          ]);
          let token: string;
          if (opts.rotate) token = rotateToken(app, 'agent', agent.agentId, { actor: `user:${owner.name}` });
          else {
            const sealed = sealedTokenOf(app.engine.db, agent.agentId);
            if (!sealed) throw new CliError(`agent ${name} has no live token: use --rotate to issue one`);
            token = unseal(app.key, sealed);
          }
          if (opts.json) return printJson({ id: agent.agentId, name: agent.name, token });
          process.stdout.write(`${token}\n`);
        }),
      ),
    );
}

function registerUnquarantine(agents: Command): void {
  agents
    .command('unquarantine <name>')
    .description("lift an agent's quarantine (its reputation is unchanged)")
    .action(
      action((name: string, _opts: unknown, cmd: Command) =>
        withAgent(cmd, name, async (app, owner, agent) => {
          const { unquarantineAgent } = await import('../actions/reputation.js');
          const after = unquarantineAgent(app, owner.userId, agent.agentId, `user:${owner.name}`, {
            actor: `user:${owner.name}`,
          });
          process.stdout.write(
            agent.quarantined ? `Lifted the quarantine of ${after.name}\n` : `${after.name} was not quarantined\n`,
          );
        }),
      ),
    );
}
