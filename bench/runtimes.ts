import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { configureBreakers } from '../src/actions/breakers.js';
import { configureRuntime, configureSandbox } from '../src/actions/runs/agent-controls.js';
import { createOwner, registerAgent } from '../src/actions/principals.js';
import { setSecret } from '../src/actions/secrets.js';
import { openApp, type App } from '../src/app.js';
import type { Runtime } from '../src/events/principals.js';
import { startRuntime } from '../src/runtime/index.js';
import { hostSupport } from '../src/runtime/sandbox.js';
import { callToolThenFinish, startModelEndpoint } from '../testkit/model-endpoint/index.js';
import { serveColony } from './serve.js';
import { figure, median, type Figure } from './util.js';

/**
 * The agent runtimes (issue 32), confined as in production, against the project's scripted model endpoint:
 * - runtime_first_call_ms_<cli>: from the wake to the first MCP call reaching Colony (its audit row) of a
 *   real CLI (Claude Code, Codex, OpenCode) whose model asks for `whoami` at once; baseline = the same wake
 *   of a `command` agent whose program connects and calls whoami with no model (testkit/first-call-agent.mjs).
 *   The ratio is what the CLI's own start-up and its first model turn cost over the floor.
 * - runtime_adapter_overhead_ms: what an adapter adds to a run — the binary found and mounted, its config
 *   file written, its JSON stream read into the run's outcome, usage and transcript — as a claude-code run
 *   of a stand-in binary that prints a canned stream-json result minus a `command` run of the same script;
 *   baseline = the command run; the ratio is adapter run / command run (1.0: no cost).
 * Runs alternate between the kinds, round by round. No sandbox on this host: the figures are null.
 */
export interface RuntimeFigures {
  firstCall: Record<string, Figure>;
  adapterOverhead: Figure;
}

const CLIS: { runtime: Exclude<Runtime, 'command'>; model: string }[] = [
  { runtime: 'claude-code', model: 'claude-sonnet-4-5' },
  { runtime: 'codex', model: 'scripted-model' },
  { runtime: 'opencode', model: 'anthropic/claude-sonnet-4-5' },
];

export async function benchRuntimes(
  dir: string,
  o: { rounds: number; clis: readonly string[] },
): Promise<RuntimeFigures | null> {
  if (!hostSupport().ok) return null;
  const data = join(dir, 'runtimes');
  mkdirSync(data, { recursive: true });
  const endpoint = await startModelEndpoint(callToolThenFinish('whoami'), {
    models: ['claude-sonnet-4-5', 'scripted-model'],
  });
  const app = openApp({ dataDir: data });
  const served = await serveColony(app);
  const runtime = startRuntime(app, { mcpUrl: `${served.base}/mcp`, pollMs: 1000, sandbox: 'on' });
  const saved = process.env.COLONY_CLAUDE_BIN;
  try {
    const owner = createOwner(app, 'bench-owner', { actor: 'system' });
    const ownerSpeaker = { key: `user-${owner.userId}`, name: 'bench-owner', tenant: owner.userId };
    for (const [name, value] of Object.entries({
      ANTHROPIC_API_KEY: 'sk-ant-bench',
      ANTHROPIC_BASE_URL: endpoint.url,
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: endpoint.url,
    }))
      setSecret(app, ownerSpeaker, { name, value, scope: `user:${owner.userId}` }, { actor: 'system' });
    const agentOf = (name: string, runtime: Runtime, model: string, command: string | null = null) =>
      makeAgent(app, owner.userId, { name, runtime, model, command });
    const floor = agentOf(
      'floor',
      'command',
      'none',
      `node ${join(import.meta.dirname, '..', 'testkit', 'first-call-agent.mjs')}`,
    );
    const firstCall = async (agentId: number) => {
      const t0 = Date.now();
      await oneRun(app, runtime.reactor!, agentId);
      const calls = served.audit
        .query({ principalId: `agent:${agentId}` })
        .map((r) => Date.parse(r.at))
        .filter((at) => at >= t0);
      if (calls.length === 0) throw new Error(`agent ${agentId}'s run made no MCP call`);
      return Math.min(...calls) - t0;
    };
    const clis = CLIS.filter((c) => o.clis.includes(c.runtime)).map((c) => ({
      ...c,
      agentId: agentOf(`bench-${c.runtime}`, c.runtime, c.model),
      ms: [] as number[],
    }));
    const floorMs: number[] = [];
    await firstCall(floor); // warm: node's module cache, the sandbox's first start
    for (const c of clis) await firstCall(c.agentId);
    for (let r = 0; r < o.rounds; r++) {
      floorMs.push(await firstCall(floor));
      for (const c of clis) c.ms.push(await firstCall(c.agentId));
    }
    const base = median(floorMs);
    const figures: Record<string, Figure> = {};
    for (const c of clis)
      figures[c.runtime] = { ...figure(median(c.ms), 'ms', base), data: `${o.rounds} runs, first call whoami` };
    const adapterOverhead = await benchAdapterOverhead(app, runtime.reactor!, owner.userId, data, o.rounds * 10);
    return { firstCall: figures, adapterOverhead };
  } finally {
    if (saved === undefined) delete process.env.COLONY_CLAUDE_BIN;
    else process.env.COLONY_CLAUDE_BIN = saved;
    await runtime.reactor?.idle();
    runtime.stop();
    await served.close();
    app.engine.close();
    await endpoint.close();
  }
}

/** A stand-in for Claude Code: its stream-json init and result lines, then exit 0 — the adapter's whole path, no model. */
const FAKE_CLAUDE = `#!/bin/sh
cat >/dev/null
echo '{"type":"system","subtype":"init","session_id":"bench-session","apiKeySource":"ANTHROPIC_API_KEY","tools":[]}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"Nothing to do."}]},"session_id":"bench-session"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"Nothing to do.","session_id":"bench-session","total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":5},"permission_denials":[]}'
`;

async function benchAdapterOverhead(
  app: App,
  reactor: Reactor,
  ownerId: number,
  data: string,
  runs: number,
): Promise<Figure> {
  const bin = join(data, 'bin');
  mkdirSync(bin, { mode: 0o755, recursive: true });
  chmodSync(bin, 0o755);
  const fake = join(bin, 'claude');
  writeFileSync(fake, FAKE_CLAUDE, { mode: 0o755 });
  process.env.COLONY_CLAUDE_BIN = fake;
  const adapted = makeAgent(app, ownerId, { name: 'adapted', runtime: 'claude-code', model: 'sonnet', command: null });
  // The same lines as the command (a command run mounts no file of the owner's).
  const lines = FAKE_CLAUDE.split('\n').slice(1).filter(Boolean).join('; ');
  const plain = makeAgent(app, ownerId, { name: 'plain', runtime: 'command', model: 'none', command: lines });
  const a: number[] = [];
  const p: number[] = [];
  await oneRun(app, reactor, adapted);
  await oneRun(app, reactor, plain);
  for (let i = 0; i < runs; i++) {
    a.push(await oneRun(app, reactor, adapted));
    p.push(await oneRun(app, reactor, plain));
  }
  const [ma, mp] = [median(a), median(p)];
  return {
    ...figure(Math.max(0, ma - mp), 'ms', mp, ma / mp),
    data: `${runs} confined runs each: ${ma.toFixed(1)} ms vs ${mp.toFixed(1)} ms`,
  };
}

type Reactor = NonNullable<ReturnType<typeof startRuntime>['reactor']>;

function makeAgent(
  app: App,
  ownerId: number,
  a: { name: string; runtime: Runtime; model: string; command: string | null },
): number {
  const by = { actor: 'system' };
  const made = registerAgent(
    app,
    {
      name: a.name,
      ownerId,
      model: a.model,
      systemPrompt: 'You call whoami once, then stop.',
      toolScope: ['whoami'],
      tier: 'supervised',
      command: a.command,
      parentId: null,
      spawnDepth: 0,
      ...(a.runtime === 'command' ? {} : { runtime: a.runtime }),
    },
    by,
  );
  configureRuntime(app, ownerId, made.agentId, { cooldownSec: 0, dailyRunBudget: 1_000_000 }, 'bench', by);
  // The scripted endpoint is on this host's loopback.
  configureSandbox(app, ownerId, made.agentId, { network: 'host' }, 'bench', by);
  // A run that only calls whoami makes no progress by design: the no-progress breaker would pause it after five.
  configureBreakers(app, ownerId, made.agentId, { maxRunsWithoutProgress: 0 }, by);
  return made.agentId;
}

/** One manual run, from the wake to its end (ms); a failed run fails the bench with its reason. */
async function oneRun(app: App, reactor: Reactor, agentId: number): Promise<number> {
  const t0 = performance.now();
  const { kind, run } = reactor.wake({ agentId, source: 'manual', by: 'bench' });
  if (kind === 'refused') throw new Error(`run ${run.runId} refused: ${run.reason ?? ''}`);
  const end = await firstValueFrom(
    app.engine.bus.events$.pipe(
      filter(
        (e) =>
          (e.type === 'RunFinished' || e.type === 'RunFailed') && (e.data as { runId: number }).runId === run.runId,
      ),
    ),
  );
  if (end.type === 'RunFailed' || (end.data as { status?: string }).status === 'failed')
    throw new Error(`run ${run.runId} failed: ${JSON.stringify(end.data)}`);
  return performance.now() - t0;
}
