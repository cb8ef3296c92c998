import type { App } from '../../app.js';
import { runtimeDecider, type RuntimeCommand } from '../../commands/runtime.js';
import { notFound } from '../../errors.js';
import { runtimeStream, type RuntimeOverrides } from '../../events/runs.js';
import { type SandboxOverrides } from '../../events/sandbox.js';
import { getAgent, type AgentRow } from '../../projections/principal-queries.js';
import { expireAgentProbes } from '../probes.js';
import { projectOf } from '../projects.js';
import { retireAgentWebapps } from '../webapps.js';
import { type CommandOptions } from '../../engine/handle.js';

/**
 * The owner's controls over how an agent runs: its runtime settings (timeout, cooldown, daily run
 * budget, max trigger depth — null keeps the default), its confinement, its project, and stopping or
 * starting it. A stopped agent is never woken (each wake-up is refused with gate `stopped`); its running
 * process gets SIGTERM. Each finds the owner's agent and routes to the runtime decider, which checks the values.
 */
function ownedAgent(app: App, ownerId: number, agentId: number): AgentRow {
  const agent = getAgent(app.engine.db, agentId);
  if (!agent || agent.ownerId !== ownerId) throw notFound(`agent ${agentId}`, { agent_id: agentId });
  return agent;
}

/** One runtime command on the owner's own agent, and nothing else in its transaction. */
function ownerCommand(
  app: App,
  ownerId: number,
  agentId: number,
  command: RuntimeCommand,
  actor: CommandOptions,
): void {
  app.engine.transact(actor, () => {
    ownedAgent(app, ownerId, agentId);
    app.engine.handle(runtimeDecider, runtimeStream(agentId), command, actor);
  });
}

export function configureRuntime(
  app: App,
  ownerId: number,
  agentId: number,
  changes: Partial<RuntimeOverrides>,
  by: string,
  actor: CommandOptions,
): void {
  ownerCommand(app, ownerId, agentId, { type: 'ConfigureRuntime', agentId, changes, by }, actor);
}

export function stopAgent(
  app: App,
  ownerId: number,
  agentId: number,
  by: string,
  reason: string,
  actor: CommandOptions,
): void {
  app.engine.transact(actor, () => {
    ownedAgent(app, ownerId, agentId);
    app.engine.handle(runtimeDecider, runtimeStream(agentId), { type: 'StopAgent', agentId, by, reason }, actor);
    expireAgentProbes(app, agentId, 'agent_stopped', actor);
    retireAgentWebapps(app, agentId, actor);
  });
}

/** Puts an agent in one of the tenant's projects (null: none): task_create infers it, its runs start in the project's directory. */
export function setAgentProject(
  app: App,
  ownerId: number,
  agentId: number,
  projectName: string | null,
  by: string,
  actor: CommandOptions,
): void {
  app.engine.transact(actor, () => {
    ownedAgent(app, ownerId, agentId);
    const projectId = projectName === null ? null : projectOf(app, ownerId, projectName).projectId;
    app.engine.handle(
      runtimeDecider,
      runtimeStream(agentId),
      { type: 'SetAgentProject', agentId, projectId, by },
      actor,
    );
  });
}

export function startAgent(app: App, ownerId: number, agentId: number, by: string, actor: CommandOptions): void {
  ownerCommand(app, ownerId, agentId, { type: 'StartAgent', agentId, by }, actor);
}

/**
 * How the agent's processes are confined: `sandbox` off opts this agent out (recorded with every run),
 * `network` none | allow | host, the allow-list, and its limits — each null keeps the process-wide
 * default. Only its owner changes them (the CLI; no agent tool does).
 */
export function configureSandbox(
  app: App,
  ownerId: number,
  agentId: number,
  changes: Partial<SandboxOverrides>,
  by: string,
  actor: CommandOptions,
): void {
  ownerCommand(app, ownerId, agentId, { type: 'ConfigureSandbox', agentId, changes, by }, actor);
}
