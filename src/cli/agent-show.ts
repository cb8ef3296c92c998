import type { Command } from 'commander';
import type { Reputation } from '../actions/reputation.js';
import type { AgentRow } from '../projections/principal-queries.js';
import { oneLine } from '../terminal.js';
import { withAgent, withOwner } from './owner.js';
import { action, printJson } from './shared.js';

/** `colony agents list|show`: what the owner reads about its agents. */
export function registerAgentList(agents: Command): void {
  agents
    .command('list')
    .description("list the owner's agents")
    .option('--json', 'print a JSON array')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const [{ listAgents }, { runtimeOf }] = await Promise.all([
            import('../projections/principal-queries.js'),
            import('../projections/run-queries.js'),
          ]);
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
}

export function registerAgentShow(agents: Command): void {
  agents
    .command('show <name>')
    .description('one agent: config, config hash, reputation by domain, quarantine')
    .option('--json', 'print JSON')
    .action(
      action((name: string, opts: { json?: boolean }, cmd: Command) =>
        withAgent(cmd, name, async (app, _owner, agent) => {
          const [{ runtimeOf }, { reputationOf }] = await Promise.all([
            import('../projections/run-queries.js'),
            import('../actions/reputation.js'),
          ]);
          const r = reputationOf(app, agent);
          if (opts.json) return printJson(agentJson(agent, runtimeOf(app.engine.db, agent.agentId).status, r));
          process.stdout.write(`${agentLines(agent, r).join('\n')}\n`);
        }),
      ),
    );
}

/** The whole agent, its system prompt included (the owner's own), never a token. */
function agentJson(agent: AgentRow, status: string, r: Reputation) {
  return {
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
    runtime: agent.runtime,
    runtime_source: agent.ownRuntime !== null ? 'own' : agent.runtime !== null ? 'team' : null,
    runnable: agent.runnable,
    parent_agent_id: agent.parentId,
    spawn_depth: agent.spawnDepth,
    status,
    config_hash: agent.configHash,
    quarantined: agent.quarantined,
    quarantine_reason: agent.quarantineReason,
    quarantined_at: agent.quarantinedAt,
    created_at: agent.createdAt,
    // As the agent resource shows it; kept here so that loading the CLI never loads MCP (test/cli/startup.test.ts).
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
  };
}

/** Agent text (model, prompt-made names, reasons) is escaped with oneLine: it cannot break a line or reach the terminal as control sequences. */
function agentLines(agent: AgentRow, r: Reputation): string[] {
  return [
    `${agent.name} (id ${agent.agentId})  ${agent.tier}  ${oneLine(agent.model)}  ${agent.quarantined ? `QUARANTINED: ${oneLine(agent.quarantineReason ?? '')}` : 'active'}`,
    `config hash ${agent.configHash}  spawn depth ${agent.spawnDepth}${agent.parentId ? `  parent ${agent.parentId}` : ''}`,
    `tools: ${oneLine(agent.toolScope.join(', '))}`,
    `runtime: ${agent.runtime === null ? '(none: Colony does not run it; colony config set agent-runtime R)' : `${agent.runtime}${agent.ownRuntime === null ? "  (the team's)" : ''}`}`,
    `command: ${agent.command === null ? '(none: Colony does not run it; colony config set agent-command CMD)' : `${oneLine(agent.command)}${agent.ownCommand === null ? "  (the team's agent-command)" : ''}`}`,
    `reputation ${r.rollingScore.toFixed(3)} over ${r.evidenceCount} evidence rows${r.lastEvidenceAt ? ` (last ${r.lastEvidenceAt})` : ''}`,
    ...r.domains.map((d) => `  ${oneLine(d.domain)}: ${d.score.toFixed(3)} (${d.evidenceCount})`),
  ];
}
