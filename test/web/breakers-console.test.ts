/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { tripBreaker } from '../../src/actions/breakers.js';
import { launchBrowser } from '../../testkit/browser.js';
import { ok } from '../helpers/calls.js';
import { runnableAgent } from '../helpers/finished-runs.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * A loop breaker in the console, in chromium: the agent it paused is on "Needs you" with the breaker, its
 * reason and evidence (the goal's hostile title shown as text), the count on the navigation, a phone's
 * width kept; Resume in one tab lifts it and takes it off every open tab. COLONY_SCREENSHOTS=DIR keeps a
 * screenshot of the page with the open breaker.
 */
let f: HttpFixture;
let browser: Browser;

before(async () => {
  f = await httpFixture({ agentTools: ['create_goal'] });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

async function signedIn(
  options: Parameters<Browser['newContext']>[0],
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.on('dialog', (d) => {
    void d.dismiss();
    throw new Error(`a browser dialog was opened: ${d.message()}`);
  });
  const res = await page.request.post(`${f.base}/api/session`, { data: { token: f.ownerToken } });
  assert.equal(res.status(), 200);
  return { context, page };
}

describe('a loop breaker on "Needs you"', () => {
  it('shows the paused agent with its evidence and Resume lifts it in every tab', async () => {
    const g = await ok(await f.connect(f.agentToken), 'create_goal', {
      title: 'Ship the docs <img src=x onerror=alert(1)>',
      description: 'Keep every page of the documentation site accurate.',
      coordinator_config: 'worker',
    });
    const agentId = runnableAgent(f.app, 'looper');
    tripBreaker(f.app, {
      agentId,
      goalId: g.goal_id as number,
      breaker: 'repeated_failure',
      reason: 'claim_task failed 5 times in a row with the same arguments and the same error (ErrTaskNotFound)',
      evidence: {
        runIds: [12],
        calls: Array.from({ length: 5 }, (_, i) => ({
          tool: 'claim_task',
          argsDigest: 'ab12cd34',
          errorCode: 'ErrTaskNotFound',
          at: new Date(Date.now() - (5 - i) * 1000).toISOString(),
        })),
        threshold: 5,
      },
    });
    const { context, page: tabA } = await signedIn({ viewport: { width: 390, height: 844 } });
    const tabB = await context.newPage();
    for (const tab of [tabA, tabB]) {
      await tab.goto(`${f.base}/`);
      await tab.getByRole('heading', { name: 'Paused by a breaker' }).waitFor();
      await tab.waitForFunction(() => document.querySelector('.live-dot.on') !== null);
    }
    const item = tabA.locator('[data-breaker-agent="looper"]');
    const text = (await item.textContent()) ?? '';
    assert.match(text, /breaker · repeated_failure/);
    assert.match(text, /paused on goal #\d+ “Ship the docs <img src=x onerror=alert\(1\)>”/);
    assert.match(text, /claim_task failed 5 times in a row/);
    assert.match(text, /Evidence: 1 run #12 · 5 failed calls of claim_task \(ErrTaskNotFound\) · threshold 5/);
    assert.match(text, /colony agents resume looper --goal \d+/);
    assert.equal(await tabA.locator('main img').count(), 0, 'the title is text');
    assert.equal(await tabA.locator('nav a[href="/"] .count').textContent(), '1');
    const [wide, inner] = await tabA.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
    assert.ok(wide! <= inner!, `the page is ${wide} px wide on a ${inner} px screen`);
    if (process.env.COLONY_SCREENSHOTS)
      await tabA.screenshot({ path: `${process.env.COLONY_SCREENSHOTS}/needs-you-breaker.png`, fullPage: true });

    await item.getByRole('button', { name: 'Resume' }).click();
    await tabA.getByText(/looper resumed on goal #\d+\./).waitFor();
    for (const tab of [tabA, tabB]) await tab.getByText('Nothing needs you.').waitFor({ timeout: 10_000 });
    assert.equal(await tabB.locator('[data-breaker-agent]').count(), 0);
    await context.close();
  });
});
