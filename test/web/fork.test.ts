/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { openApp, productProjections } from '../../src/app.js';
import { replayTo } from '../../src/engine/replay.js';
import { goalSnapshot } from '../../src/projections/goal-snapshot.js';
import { launchBrowser } from '../../testkit/browser.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { busyGoal } from '../http/busy-goal.js';

/**
 * "Fork from here" in a real browser: the owner scrubs the goal's history back, forks at the shown position and
 * is shown where the fork is and the commands that start Colony on it; the fork holds the goal as it was there.
 * An agent's session has no such button. COLONY_SCREENSHOT=FILE keeps a picture of the result.
 */
let f: HttpFixture;
let browser: Browser;
let page: Page;
let goalId: number;

before(async () => {
  f = await httpFixture();
  ({ goalId } = busyGoal(f.app, { agentId: f.agentId, name: 'worker' }, 40, 4));
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

async function signIn(token: string): Promise<void> {
  await page.goto(`${f.base}/goals/${goalId}`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: /A busy goal/ }).waitFor();
}

describe('Fork from here', () => {
  it('forks at the position time travel shows, and says how to start Colony on the fork', async () => {
    await signIn(f.ownerToken);
    await page.getByRole('button', { name: 'Open the history' }).click();
    const slider = page.getByRole('slider', { name: "Position in the goal's history" });
    await slider.waitFor();
    await slider.focus();
    await page.keyboard.press('Home');
    for (let i = 0; i < 12; i += 1) await page.keyboard.press('ArrowRight');
    const text = (await slider.getAttribute('aria-valuetext'))!;
    const position = Number(/^position (\d+)/.exec(text)![1]);
    await page.getByText(`Showing the goal as it was at position ${position}`).waitFor();
    const head = f.eventCount();
    await page.getByRole('button', { name: 'Fork from here' }).click();
    const result = page.getByRole('status', { name: 'Fork' });
    await result.waitFor();
    const shown = (await result.textContent())!;
    assert.match(shown, new RegExp(`Forked at position ${position} into /`));
    const dir = /into (\S+) \(/.exec(shown)![1]!;
    assert.ok(shown.includes(`colony serve --data ${dir} --port 7071`), shown);
    assert.ok(shown.includes(`colony token create --data ${dir}`), shown);
    if (process.env.COLONY_SCREENSHOT) await page.screenshot({ path: process.env.COLONY_SCREENSHOT, fullPage: true });
    assert.equal(f.eventCount(), head, 'the origin log is only read');
    assert.ok(existsSync(dir));
    const fork = openApp({ dataDir: dir, durability: 'normal' });
    const mem = replayTo(f.app.engine.db, position, productProjections);
    try {
      assert.deepEqual(goalSnapshot(fork.engine.db, goalId), goalSnapshot(mem.db, goalId));
    } finally {
      mem.close();
      fork.engine.close();
    }
  });

  it("is not offered to an agent's session", async () => {
    await page.context().clearCookies();
    await signIn(f.agentToken);
    await page.getByRole('button', { name: 'Open the history' }).click();
    await page.getByRole('slider', { name: "Position in the goal's history" }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Fork from here' }).count(), 0);
  });
});
