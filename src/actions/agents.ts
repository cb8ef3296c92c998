import type { App } from '../app.js';
import { principalDecider } from '../commands/principals.js';
import type { KnownTools } from '../commands/tool-scope.js';
import { DomainError } from '../errors.js';
import { agentStream, type Runtime, type Tier } from '../events/principals.js';
import { getAgent, type AgentRow } from '../projections/principal-queries.js';
import { seedFromParent } from './agents/materialize.js';
import { configHash, type AgentMcpServer } from '../events/agent-config.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Config updates: a change of model, prompt, tools, skills, MCP servers or subagents gives the agent a
 * new config hash, seeded at 70 % of the old hash's score in each of its domains (in the same command);
 * evidence keeps going to the hash it was earned under. A tier or command change alone keeps the hash;
 * a change of nothing records nothing (the principal decider says so: commands/principals.ts).
 */
export interface AgentChanges {
  model?: string;
  systemPrompt?: string;
  toolScope?: string[];
  skills?: string[];
  mcpServers?: AgentMcpServer[];
  subagents?: string[];
  tier?: Tier;
  command?: string | null;
  /** Null: it follows its command, else the team's runtime. */
  runtime?: Runtime | null;
}

/** `knownTools` (the tool registry's names): given, a new tool scope may name only agent-surface tools (commands/tool-scope.ts). */
export function updateAgent(
  app: App,
  ownerId: number,
  agentId: number,
  changes: AgentChanges,
  actor: CommandOptions,
  knownTools?: KnownTools,
): { agent: AgentRow; hashChanged: boolean } {
  let hashChanged = false;
  app.engine.transact(actor, () => {
    const before = getAgent(app.engine.db, agentId);
    if (!before || before.ownerId !== ownerId)
      throw new DomainError('ErrNotFound', `agent ${agentId} not found`, { agent_id: agentId });
    const next = {
      model: changes.model ?? before.model,
      systemPrompt: changes.systemPrompt ?? before.systemPrompt,
      toolScope: changes.toolScope ?? before.toolScope,
      skills: changes.skills ?? before.skills,
      mcpServers: changes.mcpServers ?? before.mcpServers,
      subagents: changes.subagents ?? before.subagents,
      tier: changes.tier ?? before.tier,
      command: changes.command === undefined ? before.ownCommand : changes.command,
      runtime: changes.runtime === undefined ? before.ownRuntime : changes.runtime,
    };
    const hash = configHash({
      model: next.model,
      system_prompt: next.systemPrompt,
      tool_scope: next.toolScope,
      skills: next.skills,
      mcp_servers: next.mcpServers,
      subagents: next.subagents,
    });
    const { events } = app.engine.handle(
      principalDecider,
      agentStream(agentId),
      {
        type: 'UpdateAgentConfig',
        config: {
          agentId,
          ...next,
          toolScope: [...new Set(next.toolScope)].sort(),
          configHash: hash,
          previousHash: before.configHash,
        },
        before: { tier: before.tier, command: before.ownCommand, runtime: before.ownRuntime },
        knownTools: changes.toolScope === undefined ? undefined : knownTools,
      },
      actor,
    );
    hashChanged = events.length > 0 && hash !== before.configHash;
    if (hashChanged) seedFromParent(app, getAgent(app.engine.db, agentId)!, before, actor, before.configHash);
  });
  return { agent: getAgent(app.engine.db, agentId)!, hashChanged };
}
