import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../app.js';
import { COORDINATOR_MODEL, COORDINATOR_NAME } from '../actions/coordinator.js';
import type { Runtime } from '../events/principals.js';
import { listAgents, getUser, type AgentRow } from '../projections/principal-queries.js';
import { runtimeOf } from '../projections/run-queries.js';
import { sealedSecrets } from '../projections/secrets.js';
import { adapterFor } from './adapters/index.js';
import { resolveBinary, type ResolvedBinary } from './adapters/binary.js';
import { shellLine } from './adapters/shell.js';
import type { RuntimeAdapter } from './adapters/types.js';
import { Confiner, networkDefault, type SandboxSwitch } from './confine.js';
import { launch } from './harness.js';
import { defaultAllowHosts, allowed } from './network-gate.js';

/**
 * `colony doctor` (and `serve` at start): every runtime the owner's agents use, checked the way a run would
 * need it — its CLI found and what the sandbox mounts for it, its version read by running it inside the
 * sandbox, and per agent: a model the CLI takes, credentials it can reach (an API key secret in the
 * agent's scope, or a CLI login in the agent's private home), and its provider's host on the agent's
 * network allow-list. Each problem names its fix.
 */
export interface DoctorCheck {
  runtime: Runtime;
  /** The agent the check is about; null: the runtime itself. */
  agent: string | null;
  check: 'binary' | 'sandbox' | 'model' | 'credentials' | 'network';
  ok: boolean;
  detail: string;
}

export async function doctorRuntimes(app: App, ownerId: number, sandbox: SandboxSwitch): Promise<DoctorCheck[]> {
  const agents = listAgents(app.engine.db, ownerId).filter((a) => a.runnable && a.runtime !== 'command');
  const team = getUser(app.engine.db, ownerId)?.agentRuntime ?? null;
  const runtimes = [...new Set([...(team && team !== 'command' ? [team] : []), ...agents.map((a) => a.runtime!)])];
  const out: DoctorCheck[] = [];
  for (const runtime of runtimes) {
    const adapter = adapterFor(runtime)!;
    const bin = resolveBinary(adapter.needs);
    if ('problem' in bin) {
      out.push({ runtime, agent: null, check: 'binary', ok: false, detail: bin.problem });
      continue;
    }
    const where = bin.mounts.length > 0 ? ` (mounted read-only into its sandboxes: ${bin.mounts.join(', ')})` : '';
    out.push({ runtime, agent: null, check: 'binary', ok: true, detail: `${bin.path}${where}` });
    out.push({ runtime, agent: null, check: 'sandbox', ...(await versionInside(app, bin, sandbox)) });
    for (const agent of agents.filter((a) => a.runtime === runtime)) out.push(...agentChecks(app, adapter, agent));
  }
  return out;
}

function agentChecks(app: App, adapter: RuntimeAdapter, agent: AgentRow): DoctorCheck[] {
  const base = { runtime: adapter.runtime, agent: agent.name };
  const placeholder = agent.name === COORDINATOR_NAME && agent.model === COORDINATOR_MODEL;
  const modelProblem = placeholder ? null : adapter.checkModel(agent.model);
  const modelSaid =
    placeholder && adapter.checkModel(agent.model)
      ? `the CLI's default model (${agent.model} is Colony's placeholder)`
      : agent.model;
  const keys = sealedSecrets(app.engine.db, agent.ownerId, [
    { type: 'user', id: agent.ownerId },
    { type: 'agent', id: agent.agentId },
  ]).map((s) => s.name);
  const key = adapter.needs.keySecrets.find((k) => keys.includes(k));
  const home = join(app.dataDir, 'homes', agent.name);
  const login = adapter.needs.loginFiles.find((f) => existsSync(join(home, f)));
  return [
    { ...base, check: 'model', ok: modelProblem === null, detail: modelProblem ?? modelSaid },
    {
      ...base,
      check: 'credentials',
      ok: Boolean(key ?? login),
      detail: key
        ? `API key secret ${key} (billing lane api)`
        : login
          ? `CLI login ${join(home, login)} (billing lane subscription)`
          : `no credentials: set one of ${adapter.needs.keySecrets.join(', ')} as a secret (colony secrets set NAME --agent ${agent.name}), or log the CLI in with HOME=${home} (docs/agents.md: Running real agents)`,
    },
    { ...base, check: 'network', ...networkCheck(app, adapter, agent) },
  ];
}

function networkCheck(app: App, adapter: RuntimeAdapter, agent: AgentRow): { ok: boolean; detail: string } {
  const o = runtimeOf(app.engine.db, agent.agentId).sandbox;
  const mode = o?.network ?? networkDefault();
  const hosts = adapter.needs.hosts(agent.model);
  if (mode === 'host') return { ok: true, detail: "the host's network" };
  if (mode === 'none')
    return {
      ok: false,
      detail: `network none: ${adapter.label} cannot reach its provider (colony agents runtime ${agent.name} --network allow)`,
    };
  const list = o?.allowHosts ?? defaultAllowHosts();
  const missing = hosts.filter((h) => !allowed(list, h, 443));
  return missing.length === 0
    ? { ok: true, detail: `allow-list has ${hosts.join(', ') || 'its provider'}` }
    : {
        ok: false,
        detail: `not on its allow-list: ${missing.join(', ')} (colony agents runtime ${agent.name} --allow-hosts ${[...list, ...missing].join(',')})`,
      };
}

/** Runs `CLI --version` inside a sandbox as a run would (network none): proof it is visible and starts there. */
async function versionInside(
  app: App,
  bin: ResolvedBinary,
  sandbox: SandboxSwitch,
): Promise<{ ok: boolean; detail: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'colony-doctor-'));
  const confiner = new Confiner(app, { sandbox, mcpUrl: null });
  const confined = await confiner.prepare({
    role: 'verifier',
    label: 'doctor',
    command: shellLine(bin.path, ['--version']),
    readOnly: bin.mounts,
    cwd,
    cwdWritable: false,
    home: null,
    env: { PATH: process.env.PATH, LANG: 'C.UTF-8' },
    overrides: null,
  });
  try {
    if ('refused' in confined) return { ok: false, detail: `cannot be confined: ${confined.refused}` };
    const r = await launch({
      command: bin.path,
      file: confined.file,
      args: confined.args,
      cwd,
      env: confined.env,
      fds: confined.fds,
      stdin: '',
      timeoutSec: 30,
      secrets: [],
    }).done;
    const version = r.stdout.trim().split('\n')[0] ?? '';
    return r.exitCode === 0 && version
      ? { ok: true, detail: `${version} (ran inside its sandbox, ${confined.profile.mode})` }
      : {
          ok: false,
          detail: `did not run inside its sandbox (exit ${r.exitCode ?? r.signal}): ${r.tail.trim().slice(-300)}`,
        };
  } finally {
    if (!('refused' in confined)) confined.release();
    rmSync(cwd, { recursive: true, force: true });
  }
}
