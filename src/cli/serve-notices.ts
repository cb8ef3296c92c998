import { oneLine } from '../terminal.js';
import type { App } from '../app.js';
import type { Runtime } from '../events/principals.js';
import { mcpJsonSnippet } from './mcp-config.js';
import type { CheckpointSettings } from './serve-options.js';

/** What `colony serve` says on stderr once it listens: where it is, how to connect, and how it will behave. */
export function announceServing(s: {
  url: string;
  dataDir: string;
  owner: string;
  /** The owner's token when this start initialized the data dir: shown this once. */
  freshToken: string | null;
  agentCommand: string | null;
  agentRuntime: Runtime | null;
  checkpoints: CheckpointSettings;
  autoApprove: boolean;
}): void {
  const { url, dataDir } = s;
  if (s.freshToken !== null)
    process.stderr.write(`Initialized ${dataDir}. Owner "${s.owner}" token (shown once, keep it): ${s.freshToken}\n`);
  process.stderr.write(`Colony listening on ${url} (data: ${dataDir})\n`);
  process.stderr.write(`Console: ${url}/ (sign in with an owner or agent token)\n`);
  process.stderr.write(
    `Connect an MCP client with this .mcp.json (export COLONY_TOKEN first):\n${mcpJsonSnippet(`${url}/mcp`, dataDir)}\n`,
  );
  process.stderr.write(
    `Clients that sign in with OAuth (hosted connectors, the MCP Inspector) need no token: give them ${url}/mcp and approve them in the console (OAuth apps) or with colony oauth approve CODE.\n`,
  );
  process.stderr.write(`${agentCommandLine(s.agentCommand, s.agentRuntime)}\n`);
  process.stderr.write(`${checkpointLine(s.checkpoints)}\n`);
  if (s.autoApprove) process.stderr.write(AUTO_APPROVE_WARNING);
}

function checkpointLine({ everyEvents, everyMinutes }: CheckpointSettings): string {
  const when = [
    everyEvents > 0 ? `every ${everyEvents} events` : '',
    everyMinutes > 0 ? `every ${everyMinutes} min of activity` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  return when
    ? `Signed checkpoints of the log: ${when} (colony checkpoints list; colony key show for the public key).`
    : 'Signed checkpoints are off (--checkpoint-events 0 --checkpoint-minutes 0): colony checkpoint signs one by hand.';
}

export const AUTO_APPROVE_WARNING =
  'WARNING: --auto-approve: every task-tree and agent proposal in your goals is approved the moment it is made, ' +
  "without you (recorded as approved by system). Only your verifier recipes and your agents' commands ever run, but agents spawn and tasks start unreviewed. For unattended demos.\n";

/** Said once at start: how this team's agents run, or — with no default command — that goals will wait, and how to change it. */
export function agentCommandLine(agentCommand: string | null, agentRuntime: Runtime | null = null): string {
  if (agentRuntime !== null && agentRuntime !== 'command')
    return `Agents run with: ${agentRuntime} (the team's agent-runtime; an agent's own --runtime or --command wins; colony doctor checks it)`;
  return agentCommand !== null
    ? `Agents run with: ${oneLine(agentCommand)} (the team's agent-command; an agent's own --command wins)`
    : "No agent command is set: Colony starts no coordinator, so a new goal waits in draft for an outside one (an MCP client holding the coordinator's token: colony agents token coordinator). To have Colony run agents: colony config set agent-runtime claude-code|codex|opencode, or colony config set agent-command CMD (docs/agents.md: Running real agents).";
}

/** The runtime checks of `colony doctor`, at start: each failed one on stderr with its fix, so a run never fails for it unheard. */
export async function announceRuntimeChecks(app: App, ownerId: number, sandbox: 'on' | 'off'): Promise<void> {
  const { doctorRuntimes } = await import('../runtime/doctor.js');
  for (const c of await doctorRuntimes(app, ownerId, sandbox))
    if (!c.ok)
      process.stderr.write(
        `Runtime check failed: ${c.runtime}${c.agent ? ` ${c.agent}` : ''} ${c.check}: ${oneLine(c.detail)}\n`,
      );
}

/**
 * Says at start how agent processes will run — confined, refused until confinement is possible, or
 * unconfined by the owner's choice: Colony never falls back to running them unconfined without saying so.
 */
export async function announceSandbox(sandbox: 'on' | 'off'): Promise<void> {
  if (sandbox === 'off') {
    process.stderr.write(
      'WARNING: --sandbox off: agent runs and command verifiers run UNCONFINED, as this user, with the data directory, the master key and the whole host in reach; every run records it.\n',
    );
    return;
  }
  const { hostSupport } = await import('../runtime/sandbox.js');
  const host = hostSupport();
  process.stderr.write(
    host.ok
      ? `Agent runs and command verifiers run confined (bubblewrap${host.socat ? '' : '; no socat: only network host works'}).\n`
      : `WARNING: confinement is not possible here (${host.reason}): agent runs and command verifiers will be refused until it is, or until you opt out (--sandbox off, or colony agents runtime NAME --sandbox off).\n`,
  );
}
