import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Subscription } from 'rxjs';
import type { App } from '../app.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { tasksOfGoal } from '../projections/task-queries.js';
import { getAgent } from '../projections/principal-queries.js';
import { listRuns } from '../projections/run-queries.js';
import { reportData } from '../report/data.js';
import { renderReport } from '../report/html.js';
import { COORDINATOR, GOAL_TITLE, REPORT_CHECK, REPORT_RECIPE } from '../../examples/doc-gardener/shared.js';
import { startHost, type DemoHost } from './host.js';
import { summarize, type DemoSummary } from './summary.js';

/**
 * `colony demo`: the doc-gardener example end to end (examples/doc-gardener/). A fresh temporary data
 * dir in auto-approve mode; the owner creates the goal over MCP; the coordinator and the specialists it
 * spawns are real processes of the one scripted runner, talking to Colony only over MCP; when the goal
 * has closed and every run has ended, the HTML report is written and the data dir removed (unless kept).
 */
export interface DemoOptions {
  out: string;
  keep: boolean;
  timeoutSec: number;
  progress?: (line: string) => void;
}
export interface DemoResult {
  reportPath: string;
  dataDir: string;
  kept: boolean;
  wallMs: number;
  summary: DemoSummary;
}

export class DemoError extends Error {}

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const AGENT = join(REPO, 'examples', 'doc-gardener', 'agent.ts');
const COLONY_BIN = join(REPO, 'bin', 'colony.js');
const CLOSED = new Set(['completed', 'stuck', 'cancelled']);

const quote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** The one backend command line of every agent of the example: the runner, told where the repository is (Colony gives runs a clean environment). */
export function agentCommand(): string {
  return `DG_REPO=${quote(REPO)} DG_COLONY_BIN=${quote(COLONY_BIN)} ${quote(process.execPath)} --import ${quote(import.meta.resolve('tsx'))} ${quote(AGENT)}`;
}

const COORDINATOR_PROMPT = `You are ${COORDINATOR}, the coordinator of the doc-gardener: decompose "${GOAL_TITLE}" into scanning the docs, extracting the real flags and a verified diff report; spawn a docs-scanner and a cli-verifier within your own scope; complete the goal when every task is done or failed.`;

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const started = performance.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'colony-demo-'));
  let host: DemoHost | null = null;
  let watch: Subscription | null = null;
  // Ctrl-C ends the wait like a timeout does: the agents' processes are stopped and the data dir removed.
  const interrupt = { signal: null as string | null };
  const onSignal = (signal: string) => {
    interrupt.signal = signal;
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    host = await startHost(dataDir, { name: COORDINATOR, prompt: COORDINATOR_PROMPT, command: agentCommand() }, [
      { name: REPORT_RECIPE, command: REPORT_CHECK, timeoutSec: 30 },
    ]);
    if (o.progress) watch = watchProgress(host.app, o.progress);
    const goalId = await createGoal(host);
    o.progress?.(`goal #${goalId} created in ${dataDir}; waiting for the agents (at most ${o.timeoutSec} s)`);
    await untilClosed(host, goalId, started + o.timeoutSec * 1000, interrupt);
    await settle(host, started + (o.timeoutSec + 20) * 1000);
    const data = reportData(host.app, goalId)!;
    writeReport(o.out, renderReport(data));
    return {
      reportPath: o.out,
      dataDir,
      kept: o.keep,
      wallMs: Math.round(performance.now() - started),
      summary: summarize(host.app, data),
    };
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    watch?.unsubscribe();
    await host?.stop();
    if (!o.keep) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The owner sets the goal over MCP, like any client would. */
async function createGoal(host: DemoHost): Promise<number> {
  const client = new Client({ name: 'colony-demo', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(host.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${host.ownerToken}` } },
    }),
  );
  try {
    const r = await client.callTool({
      name: 'create_goal',
      arguments: {
        title: GOAL_TITLE,
        description:
          'Compare the CLI that docs/cli.md documents with the CLI the code really has (colony <command> --help) and report every difference.',
        coordinator_config: COORDINATOR,
        approval_mode: 'auto',
        budget_dollars_cents: 500,
        budget_tokens: 200_000,
        // The diff report is verified by its recipe; the scan's and the extraction's artifacts have no verifier
        // but their author yet, so the demo, which nobody watches, runs without the evidence rule.
        require_evidence: false,
      },
    });
    if (r.isError) throw new DemoError(`create_goal failed: ${JSON.stringify(r.content)}`);
    return (r.structuredContent as { goal_id: number }).goal_id;
  } finally {
    await client.close();
  }
}

async function untilClosed(
  host: DemoHost,
  goalId: number,
  deadline: number,
  interrupt: { signal: string | null },
): Promise<GoalRow> {
  for (;;) {
    const goal = getGoal(host.app.engine.db, goalId)!;
    if (CLOSED.has(goal.status)) return goal;
    if (interrupt.signal) throw new DemoError(`interrupted (${interrupt.signal}): ${stateOf(host.app, goal)}`);
    if (performance.now() > deadline) throw new DemoError(`the goal did not close in time: ${stateOf(host.app, goal)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every run ended and every verifier done, so the report is of a quiet log (bounded: a straggler does not hold the demo). */
async function settle(host: DemoHost, deadline: number): Promise<void> {
  const quiet = Promise.all([host.reactor.idle(50), host.runtime.verifier.idle()]).catch(() => undefined);
  const late = new Promise((r) => setTimeout(r, Math.max(0, deadline - performance.now())).unref());
  await Promise.race([quiet, late]);
}

/** Where things stood, for the error that says the demo ran out of time. */
function stateOf(app: App, goal: GoalRow): string {
  const db = app.engine.db;
  const tasks = tasksOfGoal(db, goal.goalId)
    .map((t) => `${t.title}=${t.status}`)
    .join(', ');
  const bad = listRuns(db, { ownerId: goal.ownerId, limit: 1000 }).find(
    (r) => r.status === 'failed' || r.status === 'timed_out',
  );
  const why = bad
    ? `; run #${bad.runId} of ${getAgent(db, bad.agentId)?.name} ${bad.status}: ${(bad.reason ?? bad.outputTail ?? '').trim().split('\n').slice(-3).join(' | ')}`
    : '';
  return `goal ${goal.status}; tasks: ${tasks || 'none'}${why}`;
}

/** The report file is written through this one function (the report module renders; the demo only places it). */
function writeReport(path: string, html: string): void {
  try {
    writeFileSync(path, html);
  } catch (e) {
    throw new DemoError(`cannot write the report to ${path}: ${(e as Error).message}`);
  }
}

function watchProgress(app: App, print: (line: string) => void): Subscription {
  const name = (id: number) => getAgent(app.engine.db, id)?.name ?? `agent-${id}`;
  return app.engine.bus.events$.subscribe((e) => {
    const d = e.data as Record<string, unknown>;
    if (e.type === 'RunStarted') print(`run #${d.runId} of ${name(d.agentId as number)} started`);
    else if (e.type === 'RunFinished') {
      print(
        `run #${d.runId} of ${name(d.agentId as number)} ${d.status} in ${((d.durationMs as number) / 1000).toFixed(1)} s (${d.tokensIn} + ${d.tokensOut} tokens, ${d.costCents}¢)`,
      );
    } else if (e.type === 'RunRefused' || e.type === 'RunFailed')
      print(
        `run #${d.runId} of ${name(d.agentId as number)}: ${e.type === 'RunRefused' ? 'refused' : 'failed'}: ${d.reason}`,
      );
    else if (/^(Task|Goal)/.test(e.type) && typeof (d.notice as { body?: unknown } | null)?.body === 'string')
      print((d.notice as { body: string }).body);
  });
}
