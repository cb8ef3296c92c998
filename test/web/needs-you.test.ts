/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { tasksOfGoal } from '../../src/projections/task-queries.js';
import { launchBrowser } from '../../testkit/browser.js';
import { ok } from '../helpers/calls.js';
import { finishedRun, runnableAgent } from '../helpers/finished-runs.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * The owner's cockpit in chromium: every page fits a 390 px phone (no sideways scroll) in light and dark,
 * empty and with data; "Needs you" acts in place and a decision taken in one tab leaves every tab and
 * the navigation's count; the goal page is created, talked to and managed without a browser dialog.
 */
const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
let f: HttpFixture;
let browser: Browser;
let goalId = 0;

before(async () => {
  f = await httpFixture({
    agentTools: [
      'create_goal',
      'propose_task_tree',
      'claim_task',
      'complete_task',
      'report_usage',
      'request_resource',
      'send_message',
    ],
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

async function signedIn(
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  // No page may fall back on the browser's own dialogs (window.prompt / confirm): they fail the test.
  page.on('dialog', (d) => {
    void d.dismiss();
    throw new Error(`a browser dialog was opened: ${d.message()}`);
  });
  const res = await page.request.post(`${f.base}/api/session`, { data: { token: f.ownerToken } });
  assert.equal(res.status(), 200);
  return { context, page };
}

/** Every console page at 390 × 844 in both colour schemes: none wider than the screen. */
async function fitsAPhone(label: string): Promise<void> {
  const pages = [
    '/',
    '/goals',
    ...(goalId ? [`/goals/${goalId}`] : []),
    '/approvals',
    '/requests',
    '/agents',
    '/agents/worker',
    '/audit',
    '/oauth',
    '/nope',
  ];
  // Both colour schemes at once (two contexts): half the wall time of one after the other.
  await Promise.all(
    (['light', 'dark'] as const).map(async (colorScheme) => {
      const { context, page } = await signedIn({ colorScheme, viewport: { width: 390, height: 844 } });
      for (const path of pages) {
        await page.goto(`${f.base}${path}`);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle');
        const [wide, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
        assert.ok(wide! <= inner!, `${label}: ${path} in ${colorScheme} is ${wide} px wide on a ${inner} px screen`);
      }
      await context.close();
    }),
  );
}

describe('the owner cockpit in chromium', () => {
  it('fits a 390 px phone on every page, empty', async () => {
    await fitsAPhone('empty');
  });

  it('"Needs you" acts in place; a decision leaves every open tab and the count', async () => {
    const agent = await f.connect(f.agentToken);
    const goal = (title: string, extra = {}) =>
      ok(agent, 'create_goal', { title, description: DESCRIPTION, coordinator_config: 'worker', ...extra });
    const tree = (title: string) => ({
      title,
      description: `${title}, all of it.`,
      children: [{ title: `${title}: the one step`, description: 'The step to do.' }],
    });
    const a = await goal('A plan to approve');
    const pa = await ok(agent, 'propose_task_tree', { goal_id: a.goal_id, tree: tree('Approved plan') });
    const b = await goal('A plan to refuse <b>bold</b>');
    const pb = await ok(agent, 'propose_task_tree', { goal_id: b.goal_id, tree: tree('Refused plan') });
    const flaky = runnableAgent(f.app, 'flaky');
    finishedRun(f.app, flaky, 'failed', 'Claude Code credentials were refused: 401 <script>');

    const { context, page: tabA } = await signedIn({ viewport: { width: 1280, height: 900 } });
    const tabB = await context.newPage();
    for (const tab of [tabA, tabB]) {
      await tab.goto(`${f.base}/`);
      await tab.getByRole('heading', { name: 'Needs you' }).waitFor();
      await tab.waitForFunction(() => document.querySelector('.live-dot.on') !== null);
    }
    const count = (tab: Page) => tab.locator('nav a[href="/"] .count').textContent();
    assert.equal(await count(tabB), '3');
    assert.match(
      (await tabA.locator('[data-failing-agent="flaky"]').textContent()) ?? '',
      /1 run in a row.*credentials were refused: 401 <script>/s,
    );
    assert.equal(await tabA.locator('main script').count(), 0);

    await tabA.locator(`[data-proposal-id="${pa.proposal_id}"]`).getByRole('button', { name: 'Approve' }).click();
    for (const tab of [tabA, tabB])
      await tab.locator(`[data-proposal-id="${pa.proposal_id}"]`).waitFor({ state: 'detached', timeout: 10_000 });
    const refused = tabB.locator(`[data-proposal-id="${pb.proposal_id}"]`);
    await refused.getByLabel('Reason').fill('Say which pages.');
    await refused.getByRole('button', { name: 'Reject' }).click();
    await tabA.locator(`[data-proposal-id="${pb.proposal_id}"]`).waitFor({ state: 'detached', timeout: 10_000 });

    // A resource request from the approved goal's step, fulfilled in place; the value never shows.
    const step = tasksOfGoal(f.app.engine.db, a.goal_id as number).at(-1)!.taskId;
    await ok(agent, 'claim_task', { task_id: step });
    const r = await ok(agent, 'request_resource', {
      name: 'DOCS_TOKEN',
      resource_type: 'api_key',
      reason: 'The docs API.',
      task_id: step,
    });
    const card = tabA.locator(`[data-request-id="${r.request_id}"]`);
    await card.getByLabel('Value').fill('docs-secret-value-1');
    await card.getByRole('button', { name: 'Seal and fulfil' }).click();
    await tabB.locator(`[data-request-id="${r.request_id}"]`).waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(await tabA.getByText('docs-secret-value-1').count(), 0);

    // Over budget: the goal pauses and is listed; resuming with a raised budget in tab B clears it in tab A.
    const paused = await goal('Runs out of money', { budget_tokens: 100 });
    const pp = await ok(agent, 'propose_task_tree', {
      goal_id: paused.goal_id,
      tree: { title: 'Spend', description: 'Spend the budget.' },
    });
    await tabA.locator(`[data-proposal-id="${pp.proposal_id}"]`).getByRole('button', { name: 'Approve' }).click();
    await tabA.locator(`[data-proposal-id="${pp.proposal_id}"]`).waitFor({ state: 'detached' });
    const spend = tasksOfGoal(f.app.engine.db, paused.goal_id as number)[0]!.taskId;
    await ok(agent, 'claim_task', { task_id: spend });
    await ok(agent, 'report_usage', { task_id: spend, tokens: 100, cost_cents: 1 });
    const need = tabB.locator(`[data-goal-need="${paused.goal_id}"][data-kind="paused"]`);
    await need.getByLabel('Token budget').fill('1000');
    await need.getByRole('button', { name: 'Resume goal' }).click();
    await tabA
      .locator(`[data-goal-need="${paused.goal_id}"]`)
      .waitFor({ state: 'detached', timeout: 10_000 })
      .catch(async (e: Error) => assert.fail(`${e.message}\n${await need.textContent()}`));

    await tabA.locator('[data-failing-agent="flaky"]').getByRole('button', { name: 'Stop it' }).click();
    for (const tab of [tabA, tabB]) await tab.getByText('Nothing needs you.').waitFor({ timeout: 10_000 });
    assert.equal(await tabB.locator('nav a[href="/"] .count').count(), 0, 'no count when nothing waits');
    goalId = a.goal_id as number;
    await context.close();
  });

  it('shows a node that cannot follow its store, without a reload, as it stands, until it follows again', async () => {
    const { context, page } = await signedIn({ viewport: { width: 390, height: 844 } });
    await page.goto(`${f.base}/`);
    await page.getByText('Nothing needs you.').waitFor();
    // What `colony serve` sets from a PostgreSQL node's failing follower (test/cli/serve-node-health.test.ts),
    // one more failed attempt each time it is asked, as a follower retrying every second.
    const since = new Date(Date.now() - 120_000);
    const reason = 'this node cannot bring in other nodes’ events from the store: <b>what it shows</b> may be behind';
    let attempts = 120;
    f.ctx.node.follow = () => ({ kind: 'follow', reason, code: 'ErrChainBroken', since, attempts: ++attempts });
    try {
      const card = page
        .getByRole('alert')
        .filter({ has: page.getByRole('heading', { name: 'This node cannot follow its store' }) });
      await card.waitFor({ timeout: 10_000 }); // GET /health is polled every 3 s
      const text = async () => (await card.textContent()) ?? '';
      assert.match(
        await text(),
        /This node cannot bring in other nodes’ events from the store: <b>what it shows<\/b> may be behind\..*ErrChainBroken since 2 min ago, 12\d attempts so far/s,
      );
      assert.equal(await page.locator('main b').count(), 0, 'its text is text');
      assert.equal(await page.locator('nav a[href="/"] .count').textContent(), '1');
      assert.equal(await page.getByText('waiting for your decision').count(), 0, 'it is no decision');
      // The count of attempts follows the node's, not the first answer's.
      const first = Number(/(\d+) attempts/.exec(await text())![1]);
      await page.waitForFunction(
        (n) => Number(/(\d+) attempts/.exec(document.querySelector('[role=alert]')?.textContent ?? '')?.[1]) > n,
        first,
        { timeout: 10_000 },
      );
      const [wide, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
      assert.ok(wide! <= inner!, `${wide} px wide on a ${inner} px screen`);
      if (process.env.COLONY_SCREENSHOTS)
        await page.screenshot({ path: `${process.env.COLONY_SCREENSHOTS}/needs-you-node.png`, fullPage: true });
    } finally {
      f.ctx.node.follow = () => null;
    }
    await page.getByText('Nothing needs you.').waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('nav a[href="/"] .count').count(), 0);
    await context.close();
  });

  it('creates a goal, posts in its channel, opens a task and cancels it in an in-page dialog', async () => {
    const { context, page } = await signedIn({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${f.base}/goals?status=draft`);
    assert.equal(await page.getByLabel('Status').inputValue(), 'draft', 'the filter comes from the URL');
    await page.getByLabel('Status').selectOption('active');
    await page.waitForFunction(() => location.search === '?status=active');
    await page.getByRole('button', { name: 'New goal' }).click();
    await page.getByLabel('Title').fill('Goal from the console');
    await page.getByLabel('What done looks like').fill(DESCRIPTION);
    await page.getByLabel('Token budget').fill('5000');
    await page.getByRole('button', { name: 'Create goal' }).click();
    await page.waitForFunction(() => /^\/goals\/\d+$/.test(location.pathname));
    await page.getByRole('heading', { name: /Goal from the console/ }).waitFor();
    assert.match(
      (await page.locator('[aria-label="Goal summary"]').textContent()) ?? '',
      /draft.*Waiting for its coordinator.*0 \/ 5,000 tokens/s,
    );
    assert.equal(
      await page.getByRole('button', { name: 'Set the budget' }).count(),
      0,
      'a draft is not closed or re-budgeted from the top',
    );

    await page.getByLabel("Message to the goal's channel").fill('@worker start with the index, please.');
    await page.getByRole('button', { name: 'Post' }).click();
    await page.locator('.conversation li.mine', { hasText: 'start with the index' }).waitFor();
    await page.getByRole('button', { name: 'Activity' }).click();
    await page.locator('.conversation li.mine').waitFor({ state: 'detached' });

    // The earlier approved goal: its step's details and a cancel through the dialog.
    await page.goto(`${f.base}/goals/${goalId}`);
    const step = tasksOfGoal(f.app.engine.db, goalId).at(-1)!.taskId;
    await page.getByRole('button', { name: `Details of task ${step}` }).click();
    await page.locator(`[data-task-detail="${step}"]`, { hasText: 'The step to do.' }).waitFor();
    await page.getByRole('button', { name: `Cancel task ${step}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Why (sent to its assignee)').fill('Not needed any more.');
    await dialog.getByRole('button', { name: 'Cancel the task' }).click();
    await page.locator(`li[data-task-id="${step}"][data-status="cancelled"]`).waitFor();
    await page.goto(`${f.base}/goals/abc`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await context.close();
  });

  it('fits a 390 px phone on every page, with data', async () => {
    await fitsAPhone('with data');
  });
});
