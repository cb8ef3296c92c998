import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AgentChanges } from '../actions/agents.js';
import { TIERS, type Tier } from '../events/principals.js';
import { action, CliError, printJson } from './shared.js';
import { oneLine } from '../terminal.js';
import { withOwner } from './owner.js';

// What an action needs is imported when it runs, so that defining these commands (and --help) stays cheap.
const principals = () => import('../projections/principals.js');
const runQueries = () => import('../projections/run-queries.js');

/**
 * The tools that exist, checked against a --tools list before the data dir is opened (so a typo writes
 * nothing) and handed to the action, whose decider checks again. Loaded only here: the registry imports
 * every MCP tool module, which `colony --help` must not pay for.
 */
async function checkedTools(toolScope: readonly string[]) {
  const [{ buildToolRegistry }, { checkToolScope }] = await Promise.all([
    import('../mcp/tools/index.js'),
    import('../commands/tool-scope.js'),
  ]);
  const known = buildToolRegistry().known();
  checkToolScope(toolScope, known, '--tools');
  return known;
}

/** `colony agents create|list|show|update|token|unquarantine`: the owner's agents (wake/stop/start/runtime: actions/runs/agent-controls.ts). */
export function registerAgents(program: Command): Command {
  const agents = program.command('agents').description('agents owned by the owner');
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
    .option('--command <cmd>', 'the command line Colony runs to start it')
    .option('--json', 'print {"id","name","token"} as JSON')
    .action(
      action(async (name: string, opts: CreateOptions, cmd: Command) => {
        const spec = parse(opts);
        const known = await checkedTools(spec.toolScope);
        return withOwner(cmd, async (app, owner) => {
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
  agents
    .command('list')
    .description("list the owner's agents")
    .option('--json', 'print a JSON array')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const [{ listAgents }, { runtimeOf }] = await Promise.all([principals(), runQueries()]);
          const rows = listAgents(app.engine.db, owner.userId);
          const status = (id: number) => runtimeOf(app.engine.db, id).status;
          if (opts.json)
            return printJson(rows.map(({ systemPrompt: _p, ...a }) => ({ ...a, status: status(a.agentId) })));
          if (rows.length === 0) return void process.stdout.write('No agents\n');
          for (const a of rows)
            process.stdout.write(
              `${String(a.agentId).padStart(4)}  ${a.name}  ${a.tier}  ${oneLine(a.model)}  ${status(a.agentId)}${a.quarantined ? '  QUARANTINED' : ''}  tools: ${oneLine(a.toolScope.join(','))}\n`,
            );
        }),
      ),
    );
  agents
    .command('show <name>')
    .description('one agent: config, config hash, reputation by domain, quarantine')
    .option('--json', 'print JSON')
    .action(
      action((name: string, opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const [{ getAgentByName }, { runtimeOf }, { reputationOf }] = await Promise.all([
            principals(),
            runQueries(),
            import('../actions/reputation.js'),
          ]);
          const agent = getAgentByName(app.engine.db, owner.userId, name);
          if (!agent) throw new CliError(`agent ${name} not found`);
          const r = reputationOf(app, agent);
          if (opts.json) {
            return printJson({
              id: agent.agentId,
              name: agent.name,
              owner_id: agent.ownerId,
              model: agent.model,
              system_prompt: agent.systemPrompt,
              tool_scope: agent.toolScope,
              skills: agent.skills,
              mcp_servers: agent.mcpServers,
              subagents: agent.subagents,
              autonomy_tier: agent.tier,
              command: agent.command,
              command_source: agent.ownCommand !== null ? 'own' : agent.command !== null ? 'team' : null,
              parent_agent_id: agent.parentId,
              spawn_depth: agent.spawnDepth,
              status: runtimeOf(app.engine.db, agent.agentId).status,
              config_hash: agent.configHash,
              quarantined: agent.quarantined,
              quarantine_reason: agent.quarantineReason,
              quarantined_at: agent.quarantinedAt,
              created_at: agent.createdAt,
              reputation: {
                rolling_score: r.rollingScore,
                evidence_count: r.evidenceCount,
                last_evidence_at: r.lastEvidenceAt,
                domains: r.domains.map((d) => ({
                  domain: d.domain,
                  score: d.score,
                  evidence_count: d.evidenceCount,
                  last_evidence_at: d.lastEvidenceAt,
                })),
              },
            });
          }
          const lines = [
            `${agent.name} (id ${agent.agentId})  ${agent.tier}  ${oneLine(agent.model)}  ${agent.quarantined ? `QUARANTINED: ${oneLine(agent.quarantineReason ?? '')}` : 'active'}`,
            `config hash ${agent.configHash}  spawn depth ${agent.spawnDepth}${agent.parentId ? `  parent ${agent.parentId}` : ''}`,
            `tools: ${oneLine(agent.toolScope.join(', '))}`,
            `command: ${agent.command === null ? '(none: Colony does not run it; colony config set agent-command CMD)' : `${oneLine(agent.command)}${agent.ownCommand === null ? "  (the team's agent-command)" : ''}`}`,
            `reputation ${r.rollingScore.toFixed(3)} over ${r.evidenceCount} evidence rows${r.lastEvidenceAt ? ` (last ${r.lastEvidenceAt})` : ''}`,
            ...r.domains.map((d) => `  ${oneLine(d.domain)}: ${d.score.toFixed(3)} (${d.evidenceCount})`),
          ];
          process.stdout.write(`${lines.join('\n')}\n`);
        }),
      ),
    );
  agents
    .command('update <name>')
    .description("change an agent's config; a new config hash starts at 70 % of the old one's reputation per domain")
    .option('--model <model>', 'model')
    .option('--prompt-file <file>', 'file holding the new system prompt')
    .option('--tools <list>', "comma-separated agent tools it may call, replacing its scope (checked like create's)")
    .option('--skills <list>', 'comma-separated skills')
    .option('--subagents <list>', 'comma-separated subagents')
    .option('--tier <tier>', `autonomy tier: ${TIERS.join(' | ')}`)
    .option('--command <cmd>', 'the command line Colony runs to start it')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, opts: UpdateOptions, cmd: Command) => {
        const changes = parseUpdate(opts);
        const known = changes.toolScope === undefined ? undefined : await checkedTools(changes.toolScope);
        return withOwner(cmd, async (app, owner) => {
          const [{ getAgentByName }, { updateAgent }] = await Promise.all([
            principals(),
            import('../actions/agents.js'),
          ]);
          const agent = getAgentByName(app.engine.db, owner.userId, name);
          if (!agent) throw new CliError(`agent ${name} not found`);
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
  agents
    .command('token <name>')
    .description(
      "print an agent's token (Colony keeps it sealed under the master key); --rotate revokes it and issues a new one",
    )
    .option('--rotate', 'revoke every token of the agent and issue a new one')
    .option('--json', 'print {"id","name","token"}')
    .action(
      action((name: string, opts: { rotate?: boolean; json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const [{ getAgentByName, sealedTokenOf }, { rotateToken }, { unseal }] = await Promise.all([
            principals(),
            import('../actions/principals.js'),
            import('../masterkey.js'),
          ]);
          const agent = getAgentByName(app.engine.db, owner.userId, name);
          if (!agent) throw new CliError(`agent ${name} not found`);
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
  agents
    .command('unquarantine <name>')
    .description("lift an agent's quarantine (its reputation is unchanged)")
    .action(
      action((name: string, _opts: unknown, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const [{ getAgentByName }, { unquarantineAgent }] = await Promise.all([
            principals(),
            import('../actions/reputation.js'),
          ]);
          const agent = getAgentByName(app.engine.db, owner.userId, name);
          if (!agent) throw new CliError(`agent ${name} not found`);
          const after = unquarantineAgent(app, owner.userId, agent.agentId, `user:${owner.name}`, {
            actor: `user:${owner.name}`,
          });
          process.stdout.write(
            agent.quarantined ? `Lifted the quarantine of ${after.name}\n` : `${after.name} was not quarantined\n`,
          );
        }),
      ),
    );
  return agents;
}

interface CreateOptions {
  model: string;
  promptFile: string;
  tools: string;
  tier: string;
  command?: string;
  json?: boolean;
}

/** Everything is checked before the data dir is opened, so a bad option writes nothing. */
function parse(opts: CreateOptions) {
  if (!TIERS.includes(opts.tier as Tier))
    throw new CliError(`--tier must be one of ${TIERS.join(', ')}, not "${opts.tier}"`);
  const toolScope = [
    ...new Set(
      opts.tools
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ].sort();
  if (toolScope.length === 0) throw new CliError('--tools must name at least one tool');
  if (!opts.model.trim()) throw new CliError('--model must not be empty');
  let systemPrompt: string;
  try {
    systemPrompt = readFileSync(opts.promptFile, 'utf8');
  } catch (e) {
    throw new CliError(
      `cannot read --prompt-file ${opts.promptFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (!systemPrompt.trim()) throw new CliError(`--prompt-file ${opts.promptFile} is empty`);
  return { model: opts.model.trim(), systemPrompt, toolScope, tier: opts.tier as Tier, command: opts.command ?? null };
}

interface UpdateOptions {
  model?: string;
  promptFile?: string;
  tools?: string;
  skills?: string;
  subagents?: string;
  tier?: string;
  command?: string;
  json?: boolean;
}

const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : [
        ...new Set(
          v
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
        ),
      ];

function parseUpdate(opts: UpdateOptions): AgentChanges {
  if (opts.tier !== undefined && !TIERS.includes(opts.tier as Tier))
    throw new CliError(`--tier must be one of ${TIERS.join(', ')}, not "${opts.tier}"`);
  const toolScope = list(opts.tools);
  if (toolScope !== undefined && toolScope.length === 0) throw new CliError('--tools must name at least one tool');
  if (opts.model !== undefined && !opts.model.trim()) throw new CliError('--model must not be empty');
  let systemPrompt: string | undefined;
  if (opts.promptFile !== undefined) {
    try {
      systemPrompt = readFileSync(opts.promptFile, 'utf8');
    } catch (e) {
      throw new CliError(
        `cannot read --prompt-file ${opts.promptFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    if (!systemPrompt.trim()) throw new CliError(`--prompt-file ${opts.promptFile} is empty`);
  }
  const changes: AgentChanges = {
    model: opts.model?.trim(),
    systemPrompt,
    toolScope,
    skills: list(opts.skills),
    subagents: list(opts.subagents),
    tier: opts.tier as Tier | undefined,
    command: opts.command,
  };
  if (Object.values(changes).every((v) => v === undefined))
    throw new CliError(
      'nothing to change: give at least one of --model, --prompt-file, --tools, --skills, --subagents, --tier, --command',
    );
  return changes;
}
