import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { COLONY_BIN, colony, type CliResult } from '../helpers/cli.js';

/**
 * `colony demo` end to end through the real CLI: the
 * doc-gardener's scripted agents run as real processes over HTTP MCP on a temporary data dir; the
 * demo exits 0 with a summary, and the HTML report it wrote shows one goal, a tree of ≥ 3 tasks, the spawned specialists, a verified or
 * failed outcome, a non-zero cost by billing code and ≥ 10 timeline events.
 */
const SPECIALISTS = ['docs-scanner', 'cli-verifier'];

/** The demo runs for tens of seconds (each `colony --help` the cli-verifier asks starts a Node process), longer than helpers/cli.ts waits. */
function colonyAsync(args: readonly string[], timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [COLONY_BIN, ...args], {
      env: { ...process.env, COLONY_DATA: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const all = (html: string, re: RegExp): RegExpMatchArray[] => [...html.matchAll(new RegExp(re.source, 'g'))];
const attr = (tag: string, name: string): string | undefined => new RegExp(`${name}="([^"]*)"`).exec(tag)?.[1];

interface Summary {
  report: string;
  data_dir: string | null;
  wall_ms: number;
  goal: { status: string; title: string };
  tasks: { total: number; by_status: Record<string, number> };
  agents: { coordinator: string; spawned: string[] };
  runs: { total: number; by_agent: Record<string, number> };
  cost: { cents: number; by_billing_code: { billing_code: string; tokens: number; cents: number }[] };
  findings: number | null;
  events: number;
  artifacts: number;
  sc003: { ok: boolean; failed: string[] };
}

describe('colony demo', () => {
  it('--help describes the demo and its options', () => {
    const r = colony(['demo', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage: colony demo \[options\]/);
    for (const flag of ['--out <file>', '--keep', '--timeout <sec>', '--json'])
      assert.ok(r.stdout.includes(flag), `${flag} in ${r.stdout}`);
  });

  it('a bad --timeout is one clear line and exit 1, before anything runs', () => {
    const r = colony(['demo', '--timeout', 'soon']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^colony: --timeout must be a whole number of seconds/);
  });

  it(
    'runs the doc-gardener end to end: exit 0, the goal closed, and a report that shows the whole goal',
    { timeout: 330_000 },
    async (t) => {
      const scratch = mkdtempSync(join(tmpdir(), 'colony-demo-test-'));
      t.after(() => rmSync(scratch, { recursive: true, force: true }));
      const out = join(scratch, 'report.html');
      // --timeout is generous: other test files may share the two cores, and the demo's own clock includes every `--help` process.
      const r = await colonyAsync(['demo', '--json', '--keep', '--out', out, '--timeout', '300'], 320_000);
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as Summary;
      if (summary.data_dir) t.after(() => rmSync(summary.data_dir!, { recursive: true, force: true }));
      assert.equal(r.code, 0, `stderr: ${r.stderr}\nstdout: ${r.stdout}`);
      t.diagnostic(`demo wall time ${(summary.wall_ms / 1000).toFixed(1)} s`);

      // The summary: the goal completed, the tree, the spawned specialists, runs, spend and findings.
      assert.equal(summary.report, out);
      assert.equal(summary.goal.status, 'completed');
      assert.equal(summary.goal.title, "Keep Colony's CLI documentation accurate");
      assert.equal(summary.tasks.total, 4);
      assert.equal(summary.tasks.by_status.done, 4);
      assert.equal(summary.agents.coordinator, 'doc-coordinator');
      assert.deepEqual([...summary.agents.spawned].sort(), [...SPECIALISTS].sort());
      for (const a of [...SPECIALISTS, 'doc-coordinator'])
        assert.ok((summary.runs.by_agent[a] ?? 0) >= 1, `runs of ${a}`);
      assert.deepEqual(summary.cost.by_billing_code.map((c) => c.billing_code).sort(), [
        'coordination',
        'docs',
        'report',
        'source',
      ]);
      assert.ok(
        summary.cost.by_billing_code.every((c) => c.cents > 0 && c.tokens > 0),
        JSON.stringify(summary.cost),
      );
      assert.equal(typeof summary.findings, 'number');
      assert.ok(summary.events >= 10);
      assert.ok(summary.artifacts >= 3);
      assert.deepEqual(summary.sc003, { ok: true, failed: [] });
      assert.ok(summary.wall_ms > 0);

      // The HTML, counted as a reader of report.html sees it.
      const html = readFileSync(out, 'utf8');
      assert.match(html, /data-goal-status="completed"/);
      assert.match(html, /Keep Colony(&#39;|&#x27;|')s CLI documentation accurate/);
      const tasks = all(html, /<li class="task"[^>]*>/).map((m) => m[0]);
      assert.ok(tasks.length >= 3, `tree nodes: ${tasks.length}`);
      assert.ok(
        tasks.some((tag) => ['done', 'failed'].includes(attr(tag, 'data-status') ?? '')),
        'a verified or failed task',
      );
      const spawned = all(html, /<tr class="agent"[^>]*data-role="spawned"[^>]*>/).map((m) => attr(m[0], 'data-agent'));
      assert.deepEqual(spawned.sort(), [...SPECIALISTS].sort());
      const costs = all(html, /<tr class="cost" data-cost="billing_code"[^>]*>/).map((m) => m[0]);
      assert.ok(
        costs.some((tag) => Number(attr(tag, 'data-cents')) > 0),
        'a non-zero cost by billing code',
      );
      assert.ok(all(html, /<tr class="event"/).length >= 10, 'timeline events');
      const runs = all(html, /<tr class="run"[^>]*>/).map((m) => m[0]);
      for (const name of SPECIALISTS) {
        assert.ok(
          runs.some(
            (tag) =>
              attr(tag, 'data-agent') === name &&
              Number(attr(tag, 'data-duration-ms')) > 0 &&
              Number(attr(tag, 'data-tokens-out')) > 0,
          ),
          `a run of ${name} with non-zero duration and tokens`,
        );
      }

      // The kept data dir: the cli-verifier's report (its command verifier passed on it) and an intact hash chain.
      assert.ok(summary.data_dir && existsSync(summary.data_dir), 'the data dir is kept with --keep');
      const diff = readFileSync(
        join(summary.data_dir, 'workspace', 'agents', 'cli-verifier', 'cli-doc-diff.md'),
        'utf8',
      );
      assert.equal(diff.split('\n')[0], '# CLI documentation diff');
      assert.match(diff, new RegExp(`Findings: ${summary.findings}`));
      const verify = colony(['verify', '--data', summary.data_dir]);
      assert.equal(verify.code, 0, verify.stderr);
    },
  );
});
