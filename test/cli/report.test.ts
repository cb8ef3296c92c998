import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner, ownerOf } from '../../src/actions/principals.js';
import { openApp } from '../../src/app.js';
import { escapeHtml } from '../../src/report/markup.js';
import { colony, colonyFails, logHead } from '../helpers/cli.js';
import { buildReportGoal, GOAL_TITLE, type BuiltGoal } from '../report/goal-fixture.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony report --goal ID --out FILE [--json]` as a separate process on a real data dir whose goal
 * was built through the actions: the file, the printed path and summary, and each refusal — one line
 * on stderr, a non-zero exit, no file and nothing appended to the log.
 */
const scratch = tempDir('colony-cli-report-');
after(() => scratch.cleanup());

const dir = join(scratch.dir, 'data');
let built: BuiltGoal;
let otherGoal: number;

/** A refusal (see colonyFails) that printed nothing on stdout and wrote no report file. */
function fails(args: string[], pattern: RegExp, out?: string): void {
  const r = colonyFails(dir, args, pattern);
  assert.equal(r.stdout, '');
  if (out) assert.ok(!existsSync(out), `${out} was not written`);
}

before(() => {
  const init = colony(['init', '--data', dir]);
  assert.equal(init.code, 0, init.stderr);
  const app = openApp({ dataDir: dir });
  try {
    built = buildReportGoal(app, ownerOf(app)!.userId);
    // Another tenant's goal in the same store: the data dir's owner may not see it.
    const other = createOwner(app, 'other-owner', { actor: 'test' });
    otherGoal = createGoal(
      app,
      { key: `user-${other.userId}`, name: 'other-owner', tenant: other.userId },
      {
        title: 'Not yours',
        description: "Another owner's goal.",
        budgets: { tokens: null, cents: null },
        maxSpawnDepth: 3,
        coordinatorConfig: 'default',
        approvalMode: 'human',
      },
      { actor: 'test' },
    ).goalId;
  } finally {
    app.engine.close();
  }
});

describe('colony report', () => {
  it('writes the HTML file, prints its path and a one-line summary, and appends nothing', () => {
    const out = join(scratch.dir, 'report.html');
    const before = logHead(dir);
    const r = colony(['report', '--goal', String(built.goalId), '--out', out, '--data', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const [path, summary, ...rest] = r.stdout.split('\n');
    assert.equal(path, out);
    assert.deepEqual(rest, ['']);
    assert.match(
      summary!,
      new RegExp(
        `^Goal ${built.goalId} ".*" \\(completed\\): 4 tasks, 3 agents \\(2 spawned\\), 3 runs, \\d+ events, 4450 tokens, 74¢$`,
      ),
    );
    const html = readFileSync(out, 'utf8');
    assert.match(html, /^<!doctype html>/);
    assert.ok(html.includes(`<h1>${escapeHtml(GOAL_TITLE)}</h1>`));
    assert.ok(!html.includes('<script'));
    assert.equal(logHead(dir), before, 'a report only reads');
  });

  it('--json prints {path, summary}, overwriting an existing file', () => {
    const out = join(scratch.dir, 'again.html');
    writeFileSync(out, 'an older report');
    const r = colony(['report', '--goal', String(built.goalId), '--out', out, '--json', '--data', dir]);
    assert.equal(r.code, 0, r.stderr);
    const body = JSON.parse(r.stdout) as { path: string; summary: Record<string, unknown> };
    assert.deepEqual(Object.keys(body), ['path', 'summary']);
    assert.equal(body.path, out);
    assert.deepEqual(
      { ...body.summary, events: typeof body.summary.events },
      {
        goal_id: built.goalId,
        title: GOAL_TITLE,
        status: 'completed',
        tasks: 4,
        agents: 3,
        spawned_agents: 2,
        runs: 3,
        events: 'number',
        artifacts: 1,
        outcomes: 3,
        spent_tokens: 4450,
        spent_dollars_cents: 74,
      },
    );
    assert.ok((body.summary.events as number) >= 10);
    assert.match(readFileSync(out, 'utf8'), /^<!doctype html>[\s\S]*<\/html>\n$/);
  });

  it("refuses missing options, a bad or unknown goal and another owner's goal with one line", () => {
    const out = join(scratch.dir, 'never.html');
    fails(['report', '--out', out], /required option '--goal <id>' not specified/, out);
    fails(['report', '--goal', String(built.goalId)], /required option '--out <file>' not specified/);
    fails(['report', '--goal', 'abc', '--out', out], /^colony: --goal must be a positive integer, not "abc"$/, out);
    fails(['report', '--goal', '0', '--out', out], /--goal must be a positive integer/, out);
    fails(['report', '--goal', '999', '--out', out], /^colony: goal 999 not found$/, out);
    fails(
      ['report', '--goal', String(otherGoal), '--out', out],
      new RegExp(`^colony: goal ${otherGoal} not found$`),
      out,
    );
  });

  it('refuses a path it cannot write with one line', () => {
    const missing = join(scratch.dir, 'no-such-dir', 'report.html');
    fails(
      ['report', '--goal', String(built.goalId), '--out', missing],
      new RegExp(`^colony: cannot write ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOENT`),
      missing,
    );
    const aDir = join(scratch.dir, 'a-directory');
    mkdirSync(aDir);
    fails(['report', '--goal', String(built.goalId), '--out', aDir], /^colony: cannot write .*a-directory: EISDIR/);
  });

  it('refuses a data dir that was never initialized, and has --help', () => {
    const r = colony([
      'report',
      '--goal',
      '1',
      '--out',
      join(scratch.dir, 'x.html'),
      '--data',
      join(scratch.dir, 'missing'),
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^colony: no Colony data in .*\n$/);
    const help = colony(['report', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: colony report \[options\]/);
    assert.match(help.stdout, /--goal <id>/);
    assert.match(help.stdout, /--out <file>/);
    assert.match(help.stdout, /--json/);
  });
});
