import type { SandboxOverrides } from '../events/sandbox.js';
import { effectiveSandbox } from './confine.js';

/** An agent's confinement as it would run now (`effectiveSandbox`), as `colony agents runtime --json` and the console's agent page show it. */
export function sandboxView(o: SandboxOverrides | null) {
  const box = effectiveSandbox(o);
  return {
    sandbox: box.sandbox,
    network: box.network,
    allow_hosts: box.allowHosts,
    memory_mb: box.limits.memoryMb,
    cpu_sec: box.limits.cpuSec,
    pids: box.limits.pids,
    file_size_mb: box.limits.fileMb,
    disk_mb: box.limits.diskMb,
  };
}
