import { closeSync, existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from '../app.js';
import { openDir } from '../beneath.js';
import { sandboxIdentity } from '../sandbox-user.js';
import { Descriptors, mountRefusal, mountsFor, writableProblem } from './confine-mounts.js';
import type { LimitKind, Limits, NetworkMode, SandboxOverrides, SandboxProfile } from '../events/sandbox.js';
import { RunCgroup } from './cgroups.js';
import { limitHit, prlimitArgs } from './limits.js';
import { defaultAllowHosts, RunSockets } from './network-gate.js';
import { bwrapArgs, bwrapProfile, writableOf, type Mounts } from './bwrap-args.js';
import { limitsFor, networkDefault, type SandboxSwitch } from './confine-defaults.js';
import { gateScript, insideEnv } from './confine-inside.js';
import { asSandboxUser, hostSupport, which } from './sandbox.js';
import { DiskWatch, lowSpace } from './disk-watch.js';
import type { ProcessControl } from './harness.js';

export { effectiveSandbox, networkDefault, sandboxDefault, type SandboxSwitch } from './confine-defaults.js';

/**
 * Every process Colony starts — agent runs and command verifiers — goes through `prepare`:
 * it becomes `prlimit … bwrap … sh -c CMD` (inside a cgroup when Colony may make one), with the
 * environment fixed up for the inside (HOME, the MCP URL on the sandbox's own loopback, the proxy). Where
 * confinement is impossible the process is refused with the reason — never started unconfined — unless
 * the owner opted out (`serve --sandbox off`, or `colony agents runtime NAME --sandbox off`), and then
 * the profile says so. What a run ran under is its profile, recorded with the run.
 */
export interface ConfineRequest {
  role: 'agent' | 'verifier';
  /** Names its cgroup: `run-12`, `verify-7`. */
  label: string;
  /** The `sh -c` line, or how to make it from the environment the process will have (an adapter's line names files by it). */
  command: string | ((inside: NodeJS.ProcessEnv) => string);
  /** More directories to mount read-only (a runtime's CLI installed outside the sandbox's view: adapters/binary.ts). */
  readOnly?: readonly string[];
  cwd: string;
  /** Whether the working directory is mounted read-write (agents) or read-only (verifiers, unless their recipe says so). */
  cwdWritable: boolean;
  env: NodeJS.ProcessEnv;
  /** A directory of the host that becomes its HOME (agents keep theirs between runs); null: an empty private one. */
  home: string | null;
  overrides: SandboxOverrides | null;
}
export interface Confined {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Descriptors the process must inherit as 3, 4, … (the mounts bubblewrap binds; it closes them once mounted). */
  fds: readonly number[];
  profile: SandboxProfile;
  /** Watches its disk while it runs (disk-watch.ts), stopping it past the quota or the free-space floor; give it to `launch`. */
  watch(control: ProcessControl): () => void;
  /** The limit the finished process ran into, if any. */
  limitHit(result: { signal: string | null; exitCode: number | null; tail: string }): LimitKind | null;
  /** Kills what is left in its cgroup, closes its sockets and descriptors. */
  release(): void;
}
/**
 * A refusal says whose it is to fix: `host` (no bubblewrap, prlimit or socat: the owner's machine) or
 * `place` (the directory is missing, a symlink, not the sandbox user's: what the process was to work on).
 */
export type Confinement = Confined | { refused: string; cause: 'host' | 'place' };

export { COLONY_ROOT } from './confine-mounts.js';

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
    // The host's disk before anything else: below the floor nothing starts, confined or not.
    const low = lowSpace(this.app.dataDir);
    if (low) return { refused: `not started: ${low}`, cause: 'host' };
    if (this.options.sandbox === 'off' || o?.sandbox === 'off')
      return unconfined(req, limits, this.options.sandbox === 'off' ? 'serve' : 'agent');
    const network: NetworkMode = req.role === 'verifier' ? 'none' : (o?.network ?? networkDefault());
    const gated = req.role === 'agent' && network !== 'host';
    const tools = hostTools(gated, network);
    if ('refused' in tools) return tools;
    const problem = this.placesProblem(req);
    if (problem) return { refused: problem, cause: 'place' };
    const allowHosts = network === 'allow' ? (o?.allowHosts ?? defaultAllowHosts()) : null;
    const sockets =
      gated && this.options.mcpUrl ? await RunSockets.open(new URL(this.options.mcpUrl), allowHosts) : null;
    const fds = new Descriptors();
    let mounts: Mounts, bwrap: string[], disk: DiskWatch;
    try {
      mounts = mountsFor({
        cwd: req.cwd,
        cwdWritable: req.cwdWritable,
        home: req.home,
        sockets: sockets?.dir ?? null,
        dataDir: this.app.dataDir,
        shareNetwork: network === 'host',
        extraReadOnly: req.readOnly ?? [],
      });
      bwrap = bwrapArgs(mounts, (path) => fds.open(path));
      disk = DiskWatch.open(writableOf(mounts), { diskMb: limits.diskMb, dataDir: this.app.dataDir, du: tools.du });
    } catch (e) {
      fds.close();
      sockets?.close();
      return { refused: mountRefusal(e, 'its working directory or home'), cause: 'place' };
    }
    // Made last: nothing that can refuse comes after it, so a refusal never leaves a cgroup behind.
    const cgroup = RunCgroup.create(`${req.label}-${process.pid}`, limits);
    const env = insideEnv(req.env, network);
    const [file, ...args] = commandLine(tools, limits, cgroup, bwrap, gated, lineOf(req, env));
    return {
      file: file!,
      args,
      env,
      fds: fds.list,
      profile: bwrapProfile(mounts, network, allowHosts, limits, cgroup),
      watch: (control) => disk.start(control),
      limitHit: (r) => disk.hit() ?? limitHit(r, cgroup),
      release: () => {
        disk.close();
        fds.close();
        cgroup?.remove();
        sockets?.close();
      },
    };
  }

  /** Its directories exist, are no symlinks, and are the sandbox uid's to write where they are mounted writable. */
  private placesProblem(req: ConfineRequest): string | null {
    const colonyDirs = [join(this.app.dataDir, 'workspace'), join(this.app.dataDir, 'homes')].map((d) =>
      existsSync(d) ? realpathSync(d) : d,
    );
    try {
      if (req.home) writableProblem(req.home, colonyDirs);
      return req.cwdWritable ? writableProblem(req.cwd, colonyDirs) : (closeSync(openDir(req.cwd)), null);
    } catch (e) {
      return mountRefusal(e, 'its working directory');
    }
  }
}

interface HostTools {
  bwrap: string;
  prlimit: string;
  setpriv: string | null;
  du: string;
}

/** What a sandbox may write to: its working directory (when writable) and its home. */

/** The host's programs confinement needs, or the refusal that names the one missing (the owner's to install). */
function hostTools(gated: boolean, network: NetworkMode): HostTools | { refused: string; cause: 'host' } {
  const host = hostSupport();
  if (!host.ok)
    return {
      refused: `confinement is not possible here: ${host.reason}; the owner may opt out (serve --sandbox off, or colony agents runtime NAME --sandbox off)`,
      cause: 'host',
    };
  const prlimit = which('prlimit');
  if (!prlimit) return { refused: 'prlimit (util-linux) is not installed: limits cannot be set', cause: 'host' };
  const du = which('du');
  if (!du) return { refused: 'du (coreutils) is not installed: the disk quota cannot be measured', cause: 'host' };
  if (gated && !host.socat)
    return {
      refused: `network ${network} needs socat inside the sandbox (Debian: apt-get install socat)`,
      cause: 'host',
    };
  return { bwrap: host.bwrap, prlimit, setpriv: host.setpriv, du };
}

/** `[sh -c 'enter the cgroup' …] prlimit … bwrap … [setpriv …] sh -c INNER sh COMMAND`. */
function commandLine(
  t: HostTools,
  limits: Limits,
  cgroup: RunCgroup | null,
  bwrap: string[],
  gated: boolean,
  command: string,
): string[] {
  const inner = gated ? gateScript() : 'exec /bin/sh -c "$1"';
  const sandboxed = [
    t.prlimit,
    ...prlimitArgs(limits, cgroup),
    '--',
    t.bwrap,
    ...bwrap,
    '--',
    ...asSandboxUser(t.setpriv, sandboxIdentity()),
    '/bin/sh',
    '-c',
    inner,
    'sh',
    command,
  ];
  return cgroup ? ['/bin/sh', '-c', `${cgroup.enter()} && exec "$@"`, 'sh', ...sandboxed] : sandboxed;
}

/** The owner opted out: the command runs as it is, and the profile says so. */
const lineOf = (req: ConfineRequest, env: NodeJS.ProcessEnv): string =>
  typeof req.command === 'function' ? req.command(env) : req.command;

function unconfined(req: ConfineRequest, limits: Limits, by: 'serve' | 'agent'): Confined {
  return {
    file: '/bin/sh',
    args: ['-c', lineOf(req, req.env)],
    env: req.env,
    fds: [],
    profile: {
      mode: 'off',
      optOut: by,
      network: 'host',
      limits,
      enforcement: { memory: 'none', pids: 'none', cpu: 'none', fileSize: 'none', disk: 'none' },
    },
    watch: () => () => undefined,
    limitHit: () => null,
    release: () => undefined,
  };
}
