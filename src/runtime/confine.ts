import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { App } from '../app.js';
import type { LimitKind, Limits, NetworkMode, SandboxOverrides, SandboxProfile } from '../events/sandbox.js';
import { enforcement, limitDefaults, limitHit, prlimitArgs, RunCgroup } from './limits.js';
import { defaultAllowHosts, GATE_SOCKET, RunSockets } from './network-gate.js';
import {
  bwrapArgs,
  contains,
  hostSupport,
  nodeInstall,
  SANDBOX_HOME,
  SANDBOX_SOCKETS,
  which,
  type Mounts,
} from './sandbox.js';

/**
 * Every process Colony starts — agent runs and command verifiers — goes through `prepare`:
 * it becomes `prlimit … bwrap … sh -c CMD` (inside a cgroup when Colony may make one), with the
 * environment fixed up for the inside (HOME, the MCP URL on the sandbox's own loopback, the proxy). Where
 * confinement is impossible the process is refused with the reason — never started unconfined — unless
 * the owner opted out (`serve --sandbox off`, or `colony agents runtime NAME --sandbox off`), and then
 * the profile says so. What a run ran under is its profile, recorded with the run.
 */
export type SandboxSwitch = 'on' | 'off';
export interface ConfineRequest {
  role: 'agent' | 'verifier';
  /** Names its cgroup: `run-12`, `verify-7`. */
  label: string;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A directory of the host that becomes its HOME (agents keep theirs between runs); null: an empty private one. */
  home: string | null;
  overrides: SandboxOverrides | null;
}
export interface Confined {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  profile: SandboxProfile;
  /** The limit the finished process ran into, if any. */
  limitHit(result: { signal: string | null; exitCode: number | null; tail: string }): LimitKind | null;
  /** Kills what is left in its cgroup, closes its sockets. */
  release(): void;
}
export type Confinement = Confined | { refused: string };

/** Where Colony's code lives: agent runners and their modules are read from there (read-only). */
export const COLONY_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Inside the sandbox, 127.0.0.1:7070 is the run's gate: COLONY_URL and, for `allow`, HTTPS_PROXY. */
const GATE_PORT = 7070;

export class Confiner {
  constructor(
    private readonly app: App,
    private readonly options: { sandbox: SandboxSwitch; mcpUrl: string | null },
  ) {}

  get sandbox(): SandboxSwitch {
    return this.options.sandbox;
  }

  async prepare(req: ConfineRequest): Promise<Confinement> {
    const o = req.overrides;
    const limits = limitsFor(o);
    if (this.options.sandbox === 'off' || o?.sandbox === 'off')
      return unconfined(req, limits, this.options.sandbox === 'off' ? 'serve' : 'agent');
    if (!existsSync(req.cwd)) return { refused: `its working directory ${req.cwd} does not exist` };
    const host = hostSupport();
    if (!host.ok)
      return {
        refused: `confinement is not possible here: ${host.reason}; the owner may opt out (serve --sandbox off, or colony agents runtime NAME --sandbox off)`,
      };
    const network: NetworkMode = req.role === 'verifier' ? 'none' : (o?.network ?? networkDefault());
    const prlimit = which('prlimit');
    if (!prlimit) return { refused: 'prlimit (util-linux) is not installed: limits cannot be set' };
    const gated = req.role === 'agent' && network !== 'host';
    if (gated && !host.socat)
      return { refused: `network ${network} needs socat inside the sandbox (Debian: apt-get install socat)` };
    const allowHosts = network === 'allow' ? (o?.allowHosts ?? defaultAllowHosts()) : null;
    const sockets =
      gated && this.options.mcpUrl ? await RunSockets.open(new URL(this.options.mcpUrl), allowHosts) : null;
    const cgroup = RunCgroup.create(`${req.label}-${process.pid}`, limits);
    const mounts = this.mounts(req, network, sockets);
    const inner = gated ? gateScript() : 'exec /bin/sh -c "$1"';
    const sandboxed = [
      prlimit,
      ...prlimitArgs(limits, cgroup),
      '--',
      host.bwrap,
      ...bwrapArgs(mounts),
      '--',
      '/bin/sh',
      '-c',
      inner,
      'sh',
      req.command,
    ];
    const [file, ...args] = cgroup
      ? ['/bin/sh', '-c', `${cgroup.enter()} && exec "$@"`, 'sh', ...sandboxed]
      : sandboxed;
    const profile: SandboxProfile = {
      mode: 'bwrap',
      network,
      ...(allowHosts ? { allowHosts } : {}),
      writable: [...mounts.writable, ...(mounts.home ? [mounts.home] : [])],
      readOnly: mounts.readOnly,
      limits,
      enforcement: enforcement(cgroup),
    };
    return {
      file: file!,
      args,
      env: insideEnv(req.env, network),
      profile,
      limitHit: (r) => limitHit(r, cgroup),
      release: () => {
        cgroup?.remove();
        sockets?.close();
      },
    };
  }

  private mounts(req: ConfineRequest, network: NetworkMode, sockets: RunSockets | null): Mounts {
    const readOnly = [COLONY_ROOT, nodeInstall()].filter((p): p is string => p !== null).map((p) => realpathSync(p));
    if (req.home) mkdirSync(req.home, { recursive: true, mode: 0o700 });
    return {
      writable: [realpathSync(req.cwd)],
      readOnly: readOnly.filter((p) => !contains(realpathSync(req.cwd), p)),
      hidden: [realpathSync(this.app.dataDir)],
      home: req.home,
      sockets: sockets?.dir ?? null,
      cwd: realpathSync(req.cwd),
      shareNetwork: network === 'host',
    };
  }
}

/** COLONY_SANDBOX: `off` opts out of confinement for every process; anything else (or unset) keeps it on. */
export const sandboxDefault = (env: NodeJS.ProcessEnv = process.env): SandboxSwitch =>
  env.COLONY_SANDBOX === 'off' ? 'off' : 'on';

export const networkDefault = (env: NodeJS.ProcessEnv = process.env): NetworkMode => {
  const v = env.COLONY_NETWORK;
  return v === 'none' || v === 'host' || v === 'allow' ? v : 'allow';
};

/** An agent's confinement as it would run now: its own settings over the process-wide defaults (`colony agents runtime`). */
export function effectiveSandbox(o: SandboxOverrides | null): {
  sandbox: SandboxSwitch;
  network: NetworkMode;
  allowHosts: string[];
  limits: Limits;
} {
  return {
    sandbox: o?.sandbox ?? sandboxDefault(),
    network: o?.network ?? networkDefault(),
    allowHosts: o?.allowHosts ?? defaultAllowHosts(),
    limits: limitsFor(o),
  };
}

function limitsFor(o: SandboxOverrides | null): Limits {
  const d = limitDefaults();
  return {
    memoryMb: o?.memoryMb ?? d.memoryMb,
    cpuSec: o?.cpuSec ?? d.cpuSec,
    pids: o?.pids ?? d.pids,
    fileMb: o?.fileMb ?? d.fileMb,
  };
}

/** The owner opted out: the command runs as it is, and the profile says so. */
function unconfined(req: ConfineRequest, limits: Limits, by: 'serve' | 'agent'): Confined {
  return {
    file: '/bin/sh',
    args: ['-c', req.command],
    env: req.env,
    profile: {
      mode: 'off',
      optOut: by,
      network: 'host',
      limits,
      enforcement: { memory: 'none', pids: 'none', cpu: 'none', fileSize: 'none' },
    },
    limitHit: () => null,
    release: () => undefined,
  };
}

/** Inside an empty network namespace: put the run's gate (Colony's MCP, and the allow-list proxy) on 127.0.0.1, wait until it listens, then run. */
function gateScript(): string {
  const port = GATE_PORT.toString(16).toUpperCase().padStart(4, '0');
  return [
    `socat TCP-LISTEN:${GATE_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_SOCKETS}/${GATE_SOCKET} 2>/dev/null &`,
    // Ready when the kernel lists the listener (shell builtins only: a probe connection would cost a process per try).
    `n=0; until [ $n -ge 200000 ]; do while read -r _ a _ s _; do [ "$a $s" = "0100007F:${port} 0A" ] && break 2; done < /proc/net/tcp; n=$((n+1)); done`,
    'exec /bin/sh -c "$1"',
  ].join('\n');
}

/** The environment inside: HOME and TMPDIR of the sandbox; Colony's MCP on the sandbox's loopback; the proxy for everything else. */
function insideEnv(env: NodeJS.ProcessEnv, network: NetworkMode): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, HOME: SANDBOX_HOME, TMPDIR: '/tmp' };
  if (network === 'host') return out;
  if (env.COLONY_URL) out.COLONY_URL = `http://127.0.0.1:${GATE_PORT}/mcp`;
  if (network === 'allow') {
    const proxy = `http://127.0.0.1:${GATE_PORT}`;
    Object.assign(out, {
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      https_proxy: proxy,
      http_proxy: proxy,
      ALL_PROXY: proxy,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    });
  }
  return out;
}
