import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner } from '../../src/actions/principals.js';
import { reputationOf } from '../../src/actions/reputation.js';
import { openApp, type App } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { readAll } from '../../src/engine/store.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { tasksOfGoal } from '../../src/projections/task-queries.js';
import { reportData, type ReportData } from '../../src/report/data.js';
import { renderReport, REPORT_CSP } from '../../src/report/html.js';
import { duration, escapeHtml } from '../../src/report/markup.js';
import {
  ARTIFACT_BODY,
  buildReportGoal,
  EVIL,
  GOAL_DESCRIPTION,
  GOAL_TITLE,
  SCANNER_PROMPT,
  SUMMARY,
  type BuiltGoal,
} from './goal-fixture.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The goal report rendered from a goal built through the real actions: every
 * section with its numbers, escaping of everything agents and users wrote, and a file that makes no
 * request of any kind. Sections are found by the data-* attributes the renderer puts on each row.
 */
const scratch = tempDir('colony-report-');
let app: App;
let built: BuiltGoal;
let data: ReportData;
let page: string;

before(() => {
  app = openApp({ dataDir: scratch.dir, clock: fixedClock('2026-03-01T09:00:00.000Z', 1000) });
  const { userId } = createOwner(app, 'owner', { actor: 'test' });
  built = buildReportGoal(app, userId);
  data = reportData(app, built.goalId)!;
  page = renderReport(data);
});
after(() => {
  app.engine.close();
  scratch.cleanup();
});

/** Every match of `re` in the page, as the first capture group. */
const all = (re: RegExp): string[] => [...page.matchAll(re)].map((m) => m[1]!);
/** The attributes of each element of a class: `rows('run')` → [{ 'data-run-id': '1', … }]. */
function rows(cls: string): Record<string, string>[] {
  return [...page.matchAll(new RegExp(`<[a-z]+ class="${cls}"([^>]*)>`, 'g'))].map((m) =>
    Object.fromEntries([...m[1]!.matchAll(/([a-z-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])),
  );
}
const section = (id: string): string => {
  const m = new RegExp(`<(section|header) id="${id}">([\\s\\S]*?)</\\1>`).exec(page);
  assert.ok(m, `section #${id} is present`);
  return m[2]!;
};

describe('colony report: the HTML file', () => {
  it('is one self-contained file: inline CSS, a CSP that forbids every request, no script, no external resource', () => {
    assert.match(page, /^<!doctype html>\n<html lang="en">/);
    assert.ok(page.includes(`<meta http-equiv="Content-Security-Policy" content="${escapeHtml(REPORT_CSP)}">`));
    assert.equal(REPORT_CSP, "default-src 'none'; style-src 'unsafe-inline'");
    assert.equal(all(/<(style)>/g).length, 1, 'one inline stylesheet');
    assert.match(page, /prefers-color-scheme: light/);
    assert.match(page, /--bg: #0f1216/, 'dark by default');
    assert.doesNotMatch(page, /<script|<link|<img|<iframe|<object|<embed|@import|url\(/i);
    for (const tag of page.match(/<[^>]*>/g)!) {
      assert.doesNotMatch(tag, /\s(src|srcset|action|poster|formaction|background)=/i, `no resource attribute: ${tag}`);
      assert.doesNotMatch(tag, /https?:|\/\//i, `no URL inside a tag: ${tag}`);
    }
    for (const href of all(/href="([^"]*)"/g)) assert.match(href, /^#[a-z]+$/, `only in-page links: ${href}`);
    assert.ok(page.includes('https://docs.example.com/cli'), 'a URL in text stays readable text');
  });

  it('escapes everything that came from agents and users: titles, bodies, prompts, summaries, reasons', () => {
    assert.ok(!page.includes(EVIL), 'no raw <script> from the data');
    assert.ok(!page.includes('<b>now</b>') && !page.includes('<img'), 'no markup from the data');
    const esc = escapeHtml(EVIL);
    assert.equal(esc, '&lt;script&gt;alert(1)&lt;/script&gt;');
    assert.ok(page.includes(`<h1>${escapeHtml(GOAL_TITLE)}</h1>`), 'title with &, quotes and markup');
    assert.ok(page.includes(`<title>Goal #${built.goalId}: ${escapeHtml(GOAL_TITLE)} — Colony report</title>`));
    assert.ok(page.includes(escapeHtml(GOAL_DESCRIPTION)), 'description');
    assert.ok(page.includes(escapeHtml(SUMMARY)), 'completion summary');
    assert.ok(page.includes(`<pre>${escapeHtml(ARTIFACT_BODY)}</pre>`), 'artifact body, whole');
    assert.ok(page.includes(escapeHtml(SCANNER_PROMPT.slice(0, 100))), 'the prompt preview');
    assert.ok(page.includes('Failed: exit 1: 2 gaps left &amp; &quot;unfixed&quot; &lt;script&gt;'), 'failure reason');
    assert.ok(page.includes('Docs &amp; &quot;flags&quot;'), '& and " as entities');
  });

  it('header: title, status, budget against spend in tokens and cents, start, end, completion', () => {
    const h = section('summary');
    const goal = getGoal(app.engine.db, built.goalId)!;
    assert.match(h, /data-goal-status="completed">completed</);
    const spentTokens = tasksOfGoal(app.engine.db, built.goalId).reduce((n, t) => n + t.spentTokens, 0);
    assert.equal(spentTokens, 650 + 1200 + 1500 + 800 + 300, 'runs and report_usage');
    assert.match(h, /<dd data-budget="tokens">4,450 tokens of 100,000 tokens \(4\.5 %\)<\/dd>/);
    assert.match(h, /<dd data-budget="cents">74¢ of 500¢ \(14\.8 %\)<\/dd>/);
    assert.ok(h.includes(`<dt>Created</dt><dd><time datetime="${goal.createdAt}">`));
    assert.ok(
      h.includes(`<dt>Started</dt><dd><time datetime="${data.goal.activatedAt}">`) &&
        data.goal.activatedAt! > goal.createdAt,
    );
    assert.ok(h.includes(`<dt>Ended</dt><dd><time datetime="${goal.completedAt}">`) && goal.completedAt !== null);
    assert.match(
      h,
      /<b>4<\/b><span>tasks<\/span>.*<b>3<\/b><span>agents<\/span>.*<b>2<\/b><span>spawned<\/span>.*<b>3<\/b><span>runs<\/span>/s,
    );
  });

  it('task tree: nested nodes with coloured status badges, spend, verifier kind and claimed → completed duration', () => {
    const tasks = rows('task');
    assert.deepEqual(
      tasks.map((t) => [Number(t['data-task-id']), Number(t['data-depth']), t['data-status']]),
      [
        [built.taskIds.root, 0, 'approved'],
        [built.taskIds.scan, 1, 'done'],
        [built.taskIds.extract, 1, 'done'],
        [built.taskIds.diff, 1, 'failed'],
      ],
    );
    const tree = section('tree');
    assert.match(
      tree,
      /<li class="task" data-task-id="\d+" data-depth="0"[^>]*>[\s\S]*<ul><li class="task" data-task-id="\d+" data-depth="1"/,
      'children nested under the root',
    );
    assert.match(tree, /<span class="badge st-failed">failed<\/span>/);
    assert.match(tree, /<span class="badge st-done">done<\/span>/);
    assert.match(page, /\.st-done[^{]*\{ color: var\(--ok\)/, 'done is green');
    assert.match(page, /\.st-failed[^{]*\{ color: var\(--bad\)/, 'failed is red');
    assert.match(tree, /0 tokens · 0¢ \(subtree 4,450 tokens · 74¢\)/, 'the root sums its subtree');
    const scan = tasksOfGoal(app.engine.db, built.goalId).find((t) => t.taskId === built.taskIds.scan)!;
    const ms = Date.parse(scan.completedAt!) - Date.parse(scan.claimedAt!);
    assert.ok(ms > 0);
    assert.ok(
      tree.includes(
        `assignee docs-scanner · billing docs · verifier auto (approve) · 1,850 tokens · 37¢ · duration ${duration(ms)}`,
      ),
    );
    assert.match(tree, /billing source · verifier command \(approve\) · 2,300 tokens · 32¢/);
    assert.match(tree, /billing report · verifier command \(reject\) · 300 tokens · 5¢/);
  });

  it('agents: name, 12-character config hash, parent, tier, reputation seed → now, evidence count, 160-character prompt preview', () => {
    const agents = rows('agent');
    assert.deepEqual(
      agents.map((a) => [a['data-agent'], a['data-role']]),
      [
        ['coordinator', 'coordinator'],
        ['docs-scanner', 'spawned'],
        ['cli-verifier', 'spawned'],
      ],
    );
    const html = section('agents');
    for (const id of [built.coordinatorId, built.scannerId, built.verifierId]) {
      const agent = getAgent(app.engine.db, id)!;
      assert.ok(html.includes(`<code title="${agent.configHash}">${agent.configHash.slice(0, 12)}</code>`), agent.name);
      const rep = reputationOf(app, agent);
      assert.ok(
        html.includes(`<td class="num">${rep.evidenceCount}</td>`),
        `${agent.name} evidence ${rep.evidenceCount}`,
      );
    }
    const row = (name: string) => html.split('<tr class="agent"').find((r) => r.includes(`data-agent="${name}"`))!;
    assert.match(row('docs-scanner'), /<td>coordinator<\/td><td>assisted<\/td>/, 'parent and tier');
    assert.match(
      row('docs-scanner'),
      /title="docs: 0\.35 → 0\.40">0\.35 → 0\.40</,
      'seed 0.7 × 0.5, then +0.05 for an auto approval',
    );
    assert.match(
      row('cli-verifier'),
      /title="report: 0\.35 → 0\.15; source: 0\.35 → 0\.45">0\.35 → 0\.30</,
      'a reject −0.2 and a command approve +0.1',
    );
    assert.match(
      row('coordinator'),
      /<td>—<\/td><td>autonomous<\/td>.*0\.50 → 0\.50/s,
      'a root agent: no parent, bootstrap 0.5 (made autonomous by the fixture)',
    );
    const preview = data.agents.find((a) => a.name === 'docs-scanner')!.promptPreview;
    assert.equal(Array.from(preview).length, 160);
    assert.ok(preview.endsWith('…') && SCANNER_PROMPT.replace(/\s+/g, ' ').startsWith(preview.slice(0, -1)));
    assert.ok(row('docs-scanner').includes(`<td class="dim">${escapeHtml(preview)}</td>`));
  });

  it('runs: agent, source, status, duration, tokens and cost; ≥ 1 run per spawned specialist with duration and tokens', () => {
    const runs = rows('run');
    assert.deepEqual(
      runs.map((r) => [
        Number(r['data-run-id']),
        r['data-agent'],
        Number(r['data-duration-ms']),
        Number(r['data-tokens-out']),
      ]),
      [
        [built.runIds[0], 'docs-scanner', 1500, 250],
        [built.runIds[1], 'cli-verifier', 2300, 600],
        [built.runIds[2], 'docs-scanner', 0, 0],
      ],
    );
    const html = section('runs');
    assert.match(
      html,
      /<td>docs-scanner<\/td><td>task_assignment<\/td><td>#\d+<\/td>\n<td><span class="badge st-succeeded">succeeded<\/span><div class="dim sandbox">bubblewrap, network allow api\.anthropic\.com; memory 2048 MB, cpu 900 s per process, pids 512, file size 1024 MB<\/div><\/td>\n<td><time[^>]*>[^<]*<\/time><\/td><td class="num">1\.5 s<\/td><td class="num">400<\/td><td class="num">250<\/td>\n<td class="num">7¢<\/td>/,
    );
    assert.match(
      html,
      /st-refused">refused<\/span><div class="dim">goal \d+ is completed<\/div>/,
      'a refused wake-up shows its reason',
    );
    for (const name of rows('agent')
      .filter((a) => a['data-role'] === 'spawned')
      .map((a) => a['data-agent'])) {
      assert.ok(
        runs.some(
          (r) => r['data-agent'] === name && Number(r['data-duration-ms']) > 0 && Number(r['data-tokens-out']) > 0,
        ),
        `${name} has a real run`,
      );
    }
  });

  it('costs by billing code, by agent (usage reports and runs) and by tree level, with totals', () => {
    const costs = rows('cost').map((c) => [
      c['data-cost'],
      c['data-key'],
      Number(c['data-tokens']),
      Number(c['data-cents']),
    ]);
    assert.deepEqual(costs, [
      ['billing_code', 'docs', 1850, 37],
      ['billing_code', 'report', 300, 5],
      ['billing_code', 'source', 2300, 32],
      ['agent', 'cli-verifier', 1500 + 800 + 300, 12 + 20 + 5],
      ['agent', 'docs-scanner', 650 + 1200, 7 + 30],
      ['level', 'level 0', 0, 0],
      ['level', 'level 1', 4450, 74],
    ]);
    const html = section('costs');
    assert.equal(
      (html.match(/<tfoot><tr><th>Total<\/th><th class="num">4,450<\/th><th class="num">74¢<\/th>/g) ?? []).length,
      3,
      'every breakdown sums to the goal spend',
    );
  });

  it('timeline: every event of the goal, its tasks, proposals, channel and runs, in log order, with a summary', () => {
    const streams = new Set([
      `goal-${built.goalId}`,
      ...Object.values(built.taskIds).map((id) => `task-${id}`),
      ...built.runIds.map((id) => `run-${id}`),
      `channel-${getGoal(app.engine.db, built.goalId)!.channelId}`,
      'proposal-1',
      'proposal-2',
      'proposal-3',
    ]);
    const expected = readAll(app.engine.db, { limit: 100_000 }).filter((e) => streams.has(e.streamId));
    const events = rows('event');
    assert.deepEqual(
      events.map((e) => [Number(e['data-position']), e['data-type']]),
      expected.map((e) => [e.position, e.type]),
    );
    assert.ok(events.length >= 10, '≥ 10 timeline events');
    for (const type of [
      'GoalCreated',
      'TaskTreeProposed',
      'AgentProposed',
      'ProposalApproved',
      'TaskClaimed',
      'RunStarted',
      'RunFinished',
      'CostRecorded',
      'MessagePosted',
      'TaskVerified',
      'RunRefused',
      'GoalClosed',
    ])
      assert.ok(
        events.some((e) => e['data-type'] === type),
        type,
      );
    const html = section('timeline');
    assert.match(
      html,
      /RunFinished<\/td><td class="dim">system<\/td><td class="mono dim">run-\d+<\/td><td>Run #\d+ of docs-scanner succeeded \(exit 0, 1500 ms, 400 in \/ 250 out tokens, 7¢\)<\/td>/,
    );
    assert.match(
      html,
      /<td>docs-scanner spent 1200 tokens, 30¢ on task #\d+ \(report_usage: reading the README\)<\/td>/,
    );
    assert.match(
      html,
      /awaiting_verification → failed by system — exit 1: 2 gaps left &amp; &quot;unfixed&quot; &lt;script&gt;/,
      'transitions read as their goal-channel notice',
    );
    assert.match(html, /<td>docs-scanner \[artifact\]: Findings &lt;script&gt;/);
    assert.equal(data.summary.events, events.length);
  });

  it('artifacts: goal-channel messages marked artifact, with the tasks that named them', () => {
    const html = section('artifacts');
    assert.deepEqual(
      rows('artifact').map((a) => Number(a['data-message-id'])),
      [built.artifactId],
    );
    assert.ok(html.includes(`<b>Flags found ${escapeHtml(EVIL)}</b>`));
    assert.match(
      html,
      new RegExp(
        `by docs-scanner in #goal-[a-z0-9-]+ at <time[^>]*>[^<]*</time> · artifact of task #${built.taskIds.scan}`,
      ),
    );
  });

  it("the report's checklist (one goal, ≥ 3 tasks, a spawned specialist, a verified or failed outcome, a cost by billing code, ≥ 10 events) is countable from the HTML alone", () => {
    assert.equal(all(/<(h1)>/g).length, 1, '≥ 1 goal');
    assert.ok(rows('task').length >= 3, 'a tree of ≥ 3 nodes');
    assert.ok(
      rows('agent').some((a) => a['data-role'] === 'spawned'),
      '≥ 1 spawned specialist',
    );
    assert.ok(
      rows('task').some((t) => t['data-status'] === 'done' || t['data-status'] === 'failed'),
      '≥ 1 verified or failed outcome',
    );
    assert.ok(
      rows('cost').some((c) => c['data-cost'] === 'billing_code' && Number(c['data-tokens']) > 0),
      'non-zero cost by billing code',
    );
    assert.ok(rows('event').length >= 10, '≥ 10 timeline events');
  });

  it('is pure: the same data gives the same bytes; an unknown goal has no data', () => {
    assert.equal(renderReport(data), page);
    assert.equal(renderReport(JSON.parse(JSON.stringify(data)) as ReportData), page);
    assert.equal(reportData(app, 999), null);
  });

  it('a goal with nothing done yet still renders every section, with empty notes', () => {
    const owner = { key: 'user-1', name: 'owner', tenant: 1 };
    const g = createGoal(
      app,
      owner,
      {
        title: 'An idle goal',
        description: 'Nothing has happened here yet.',
        budgets: { tokens: null, cents: null },
        maxSpawnDepth: 3,
        coordinatorConfig: 'default',
        approvalMode: 'human',
      },
      { actor: 'test' },
    );
    const empty = renderReport(reportData(app, g.goalId)!);
    for (const id of ['tree', 'agents', 'runs', 'costs', 'timeline', 'artifacts'])
      assert.ok(empty.includes(`<section id="${id}">`), id);
    assert.match(empty, /No tasks yet\./);
    assert.match(empty, /No agent runs for this goal\./);
    assert.match(empty, /No artifacts\./);
    assert.match(empty, /<dd data-budget="tokens">0 tokens \(no budget\)<\/dd>/);
    assert.match(empty, /data-goal-status="draft"/);
  });
});
