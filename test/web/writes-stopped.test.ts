/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../../testkit/browser.js';
import { failSync } from '../helpers/failed-sync.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * The owner sees, without a reload, that Colony took no more writes after the disk failed to confirm one
 * (src/engine/wal-sync.ts): "Needs you" shows it as its own card — not as a node that cannot follow its
 * store — with how many writes were refused and what to do, counted on the navigation, on a 390 px phone.
 */
let f: HttpFixture;
let browser: Browser;
let restore = () => {};

before(async () => {
  f = await httpFixture();
  browser = await launchBrowser();
});
after(async () => {
  restore();
  await browser?.close();
  await f?.close();
});

describe('writes stopped, in the console', () => {
  it('"Needs you" shows the stop as it happens, with the writes refused since', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    assert.equal((await page.request.post(`${f.base}/api/session`, { data: { token: f.ownerToken } })).status(), 200);
    await page.goto(`${f.base}/`);
    await page.getByText('Nothing needs you.').waitFor();

    restore = await failSync(f.app);
    const refused = await page.request.post(`${f.base}/api/goals`, {
      data: { title: 'After the failure', description: 'Written once the disk failed.' },
      headers: { 'x-csrf-token': await csrf(page) },
    });
    assert.equal(refused.status(), 503, await refused.text());

    const card = page
      .getByRole('alert')
      .filter({ has: page.getByRole('heading', { name: 'Colony takes no more writes' }) });
    await card.waitFor({ timeout: 10_000 }); // GET /health is polled every 3 s
    assert.match(
      (await card.textContent()) ?? '',
      /The disk did not confirm a write: Colony takes no more writes.*ErrWritesStopped since .*, 1 write refused so far\..*restart Colony/s,
    );
    assert.equal(await page.getByRole('heading', { name: 'This node cannot follow its store' }).count(), 0);
    assert.equal(await page.locator('nav a[href="/"] .count').textContent(), '1');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const [wide, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
      assert.ok(wide! <= inner!, `${wide} px wide on a ${inner} px screen (${colorScheme})`);
      if (process.env.COLONY_SCREENSHOTS)
        await page.screenshot({
          path: `${process.env.COLONY_SCREENSHOTS}/needs-you-writes-stopped-${colorScheme}.png`,
          fullPage: true,
        });
    }
    await context.close();
  });
});

async function csrf(page: Page): Promise<string> {
  const me = await page.request.get(`${f.base}/api/session`);
  return ((await me.json()) as { csrf: string }).csrf;
}
