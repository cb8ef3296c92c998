/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { getGoal } from '../../src/projections/goal-queries.js';
import { getTask } from '../../src/projections/task-queries.js';
import { launchBrowser } from '../../testkit/browser.js';
import { ok } from '../helpers/calls.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * "Done only with evidence" in the console, in chromium (issue 34, Must 2): the goal page says the rule and
 * how many tasks await verification; a handed-in leaf shows that it awaits the owner's verdict, the owner
 * rejects it with a reason (back to its assignee, the rejection counted) and then approves the next hand-in,
 * every verdict listed with who gave it; the Manage section turns the rule off. At 390 px, no sideways scroll.
 * COLONY_SCREENSHOTS=DIR keeps a picture of the task detail.
 */
let f: HttpFixture;
let browser: Browser;

before(async () => {
  f = await httpFixture({ agentTools: ['claim_task', 'complete_task'] });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

async function goalPage(path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  page.on('dialog', (d) => {
    void d.dismiss();
    throw new Error(`a browser dialog was opened: ${d.message()}`);
  });
  assert.equal((await page.request.post(`${f.base}/api/session`, { data: { token: f.ownerToken } })).status(), 200);
  await page.goto(`${f.base}${path}`);
  await page.locator('main h1').first().waitFor();
  return page;
}

describe('done only with evidence in the console', () => {
  it('shows the rule and a hand-in awaiting the owner, who rejects with a reason, then approves; the rule is turned off in Manage', async () => {
    const owner = await f.connect(f.ownerToken);
    const worker = await f.connect(f.agentToken);
    const g = await ok(owner, 'create_goal', {
      title: 'Proofread the guide',
      description: 'Every page of the guide reads well.',
      approval_mode: 'auto',
    });
    const goalId = g.goal_id as number;
    const p = await ok(owner, 'propose_task_tree', {
      goal_id: goalId,
      tree: { title: 'Proofread chapter one', description: 'Fix the typos of chapter one.' },
    });
    const taskId = (p.task_ids as number[])[0]!;
    await ok(worker, 'claim_task', { task_id: taskId });
    await ok(worker, 'complete_task', { task_id: taskId, summary: 'Fixed 12 typos <b>bold</b>.' });

    const page = await goalPage(`/goals/${goalId}`);
    await page
      .locator('[data-evidence]')
      .getByText(/done only with evidence/)
      .waitFor();
    await page.locator('[data-awaiting]').getByText('1 awaiting verification').waitFor();
    const node = page.locator(`li[data-task-id="${taskId}"]`);
    await node.locator('[data-awaits-owner]').getByText('awaits your verdict').waitFor();
    await page.getByRole('button', { name: `Details of task ${taskId}` }).click();
    const detail = page.locator(`[data-task-detail="${taskId}"]`);
    await detail.locator('[data-waits-for="owner"]').waitFor();
    assert.equal(await detail.getByRole('button', { name: 'Reject' }).isDisabled(), true, 'a rejection needs a reason');
    await detail.getByLabel(/Reason/).fill('Chapter one still says "teh" twice');
    await detail.getByRole('button', { name: 'Reject' }).click();
    await page
      .getByRole('status')
      .getByText(`Task #${taskId} rejected: back to its assignee with your reason.`)
      .waitFor();
    assert.deepEqual(
      [getTask(f.app.engine.db, taskId)!.status, getTask(f.app.engine.db, taskId)!.rejections],
      ['claimed', 1],
    );

    await ok(worker, 'complete_task', { task_id: taskId, summary: 'Both fixed.' });
    await page.reload();
    await page.getByRole('button', { name: `Details of task ${taskId}` }).click();
    await detail
      .locator('[data-rejections]')
      .getByText(/Rejected 1 time this attempt \(the goal sends a hand-in back up to 2 times\)/)
      .waitFor();
    await detail.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText(`Task #${taskId} approved: done.`).waitFor();
    const verdicts = detail.getByRole('list', { name: 'Verdicts' }).locator('li');
    await verdicts.nth(1).waitFor();
    assert.deepEqual(
      (await verdicts.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').replace(/ \S+ ago| just now/, '')),
      [
        'reject by owner (owner) → claimed, rejection 1 of 2 sent back Chapter one still says "teh" twice',
        'approve by owner (owner) → done approved by owner',
      ],
    );
    const [wide, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
    assert.ok(wide! <= inner!, `the goal page is ${wide} px wide on a ${inner} px screen`);
    if (process.env.COLONY_SCREENSHOTS)
      await page.screenshot({ path: `${process.env.COLONY_SCREENSHOTS}/evidence-task-detail.png`, fullPage: true });

    const rule = page.getByRole('form', { name: 'Evidence rule' });
    await rule.getByLabel(/Done only with evidence/).uncheck();
    await rule.getByLabel('Rejections sent back').fill('0');
    await rule.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('status').getByText('Evidence rule saved.').waitFor();
    const after = getGoal(f.app.engine.db, goalId)!;
    assert.deepEqual([after.requireEvidence, after.maxRejections], [false, 0]);
    await page.locator('[data-evidence]').getByText('auto verifiers may mark tasks done').waitFor();
    await page.context().close();
  });

  it('lists a hand-in awaiting the owner on Needs you, with its count, until Approve there makes it done', async () => {
    const owner = await f.connect(f.ownerToken);
    const worker = await f.connect(f.agentToken);
    const g = await ok(owner, 'create_goal', {
      title: 'Check the <i>links</i>',
      description: 'Every link of the guide resolves.',
      approval_mode: 'auto',
    });
    const p = await ok(owner, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: { title: 'Check chapter two <b>links</b>', description: 'Follow every link of chapter two.' },
    });
    const taskId = (p.task_ids as number[])[0]!;
    await ok(worker, 'claim_task', { task_id: taskId });
    await ok(worker, 'complete_task', { task_id: taskId, summary: 'All 31 links resolve <script>x</script>' });

    const page = await goalPage('/');
    const item = page.locator(`[data-verdict-task="${taskId}"][data-verdict-kind="verdict"]`);
    await item.waitFor();
    assert.match(await item.innerText(), /Check chapter two <b>links<\/b>/, "the agent's title is text, not markup");
    assert.match(await item.innerText(), /Handed in: All 31 links resolve <script>x<\/script>/);
    const count = Number(await page.locator('#needs-verdicts .count').innerText());
    assert.ok(count >= 1, `the count: ${count}`);
    const [wide, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
    assert.ok(wide! <= inner!, `Needs you is ${wide} px wide on a ${inner} px screen`);
    if (process.env.COLONY_SCREENSHOTS) {
      await page.screenshot({ path: `${process.env.COLONY_SCREENSHOTS}/needs-you-verdict.png`, fullPage: true });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: `${process.env.COLONY_SCREENSHOTS}/needs-you-verdict-dark.png`, fullPage: true });
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await item.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText(`Task #${taskId} approved: done.`).waitFor();
    await item.waitFor({ state: 'detached' });
    assert.equal(getTask(f.app.engine.db, taskId)!.status, 'done');
    await page.context().close();
  });
});
