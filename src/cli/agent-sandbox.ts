import type { Command } from 'commander';
import type { SandboxOverrides } from '../events/sandbox.js';
import { CliError } from './shared.js';

/**
 * The confinement options of `colony agents runtime` (how its processes are sandboxed): each sets the agent's own value,
 * `default` goes back to the process-wide one. Checked here before the data dir is opened.
 */
export interface SandboxOptions {
  sandbox?: string;
  network?: string;
  allowHosts?: string;
  memory?: string;
  cpuSec?: string;
  pids?: string;
  fileSize?: string;
  disk?: string;
}

export function addSandboxOptions(cmd: Command): Command {
  return cmd
    .option(
      '--sandbox <on|off>',
      'off runs its processes unconfined (recorded with every run); on (the default) confines them',
    )
    .option(
      '--network <mode>',
      "none (only Colony's MCP), allow (Colony plus the allow-list, through a proxy; the default) or host (the host's whole network)",
    )
    .option('--allow-hosts <hosts>', 'comma-separated hosts (host, host:port, *.domain) the allow network lets through')
    .option('--memory <mb>', 'memory limit of its sandbox, in MB')
    .option('--cpu-sec <n>', 'CPU seconds per process')
    .option('--pids <n>', 'most processes in its sandbox')
    .option('--file-size <mb>', 'largest file it may write, in MB')
    .option(
      '--disk <mb>',
      'most its working directory and home may hold together, in MB (measured while it runs; past it the run is stopped)',
    );
}

export function parseSandbox(o: SandboxOptions): Partial<SandboxOverrides> {
  const out: Partial<SandboxOverrides> = {};
  const word = <T extends string>(
    raw: string | undefined,
    allowed: readonly T[],
    flag: string,
  ): T | null | undefined => {
    if (raw === undefined) return undefined;
    if (raw === 'default') return null;
    if (!allowed.includes(raw as T))
      throw new CliError(`${flag} must be ${allowed.join(', ')} or "default", not "${raw}"`);
    return raw as T;
  };
  const sandbox = word(o.sandbox, ['on', 'off'] as const, '--sandbox');
  if (sandbox !== undefined) out.sandbox = sandbox;
  const network = word(o.network, ['none', 'allow', 'host'] as const, '--network');
  if (network !== undefined) out.network = network;
  if (o.allowHosts !== undefined)
    out.allowHosts =
      o.allowHosts === 'default'
        ? null
        : o.allowHosts
            .split(',')
            .map((h) => h.trim())
            .filter(Boolean);
  const numbers: [keyof SandboxOverrides, string | undefined, string][] = [
    ['memoryMb', o.memory, '--memory'],
    ['cpuSec', o.cpuSec, '--cpu-sec'],
    ['pids', o.pids, '--pids'],
    ['fileMb', o.fileSize, '--file-size'],
    ['diskMb', o.disk, '--disk'],
  ];
  for (const [key, raw, flag] of numbers) {
    if (raw === undefined) continue;
    if (raw === 'default') (out as Record<string, unknown>)[key] = null;
    else if (!/^[1-9]\d*$/.test(raw))
      throw new CliError(`${flag} must be a positive integer or "default", not "${raw}"`);
    else (out as Record<string, unknown>)[key] = Number(raw);
  }
  return out;
}
