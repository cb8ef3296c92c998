import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { createGoal } from '../src/actions/goals.js';
import type { App } from '../src/app.js';
import { CHROMIUM, launchBrowser } from '../testkit/browser.js';
import type { Team } from './goal-data.js';
import { closeServer, serveColony } from './serve.js';
import { alternateMs, figure, latencyFigures, median, type Figure } from './util.js';

/**
 * The console in a real browser (Debian's chromium through playwright-core; skipped when it is missing):
 * - console_goals_ms (SC-011): navigation to /goals, signed in, until the list of `goals` goals ×
 *   1,000 tasks is rendered — against a static page of the same HTML (the rendered list saved and
 *   served by a bare http server), loaded in the same browser and run. Target < 1 s.
 * - console_live_ms (SC-001): a goal created (committed) → its row on the open /goals page, through the
 *   event stream — against a GET /health round trip from the same page. Target < 1 s (SC-001: 10 s).
 * - console_scrub_ms / _p95: one step of the time-travel slider on the goal page — input → the replayed
 *   tree shown — against a GET of the live snapshot from the same page.
 */
export async function benchConsole(app: App, team: Team, goals: number, runs: number): Promise<Record<string, Figure>> {
  return signedIn(app, team, async (page, base) => {
    const loadList = async () => {
      await page.goto(`${base}/goals`);
      await page.waitForFunction(
        (n) => document.querySelectorAll('table[aria-label="Goals"] tbody tr').length >= n,
        Math.min(goals, 100),
      );
    };
    await loadList();
    // The same markup without the app's script: what the browser costs to fetch and lay out that much HTML.
    const staticPage = await serveStatic((await page.content()).replace(/<script[\s\S]*?<\/script>/g, ''));
    try {
      const list = await alternateMs(
        runs,
        2,
        () => page.goto(staticPage.url).then(() => page.waitForSelector('table[aria-label="Goals"] tbody tr')),
        loadList,
      );
      const live = await liveMs(app, team, page, base, runs);
      return {
        console_goals_ms: {
          ...figure(median(list.subject), 'ms', median(list.baseline)),
          data: `${goals} goals × 1,000 tasks, rendered`,
        },
        console_live_ms: {
          ...figure(median(live.subject), 'ms', median(live.baseline)),
          data: 'create_goal committed → row on /goals',
        },
      };
    } finally {
      await staticPage.close();
    }
  });
}

export async function benchScrub(app: App, team: Team, goalId: number, steps: number): Promise<Record<string, Figure>> {
  return signedIn(app, team, async (page, base) => {
    const ms = await scrubMs(page, base, goalId, steps);
    return latencyFigures(
      'console_scrub',
      ms,
      `one slider step over a ${app.engine.head().position.toLocaleString('en-US')}-event log: input → replayed tree shown`,
    );
  });
}

/** A browser signed in as the owner on Colony's HTTP surface; nothing when chromium is missing. */
export async function signedIn(
  app: App,
  team: Team,
  fn: (page: Page, base: string) => Promise<Record<string, Figure>>,
): Promise<Record<string, Figure>> {
  if (!existsSync(CHROMIUM)) return {};
  const served = await serveColony(app);
  const browser = await launchBrowser();
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const signIn = await page.request.post(`${served.base}/api/session`, { data: { token: team.ownerToken } });
    if (!signIn.ok()) throw new Error(`sign-in failed: ${signIn.status()}`);
    return await fn(page, served.base);
  } finally {
    await browser.close();
    await served.close();
  }
}

async function liveMs(
  app: App,
  team: Team,
  page: Page,
  base: string,
  runs: number,
): Promise<{ subject: number[]; baseline: number[] }> {
  await page.goto(`${base}/goals`);
  await page.waitForSelector('.live-dot.on');
  let n = 0;
  return alternateMs(
    runs,
    1,
    () => page.evaluate(() => fetch('/health').then((r) => r.text())),
    async () => {
      n += 1;
      const g = createGoal(
        app,
        team.owner,
        {
          title: `Live goal ${n}`,
          description: 'Shows up through the event stream.',
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 3,
          coordinatorConfig: 'default',
          approvalMode: 'human',
        },
        { actor: 'user:owner' },
      );
      await page.waitForSelector(`tr[data-goal-id="${g.goalId}"]`, { timeout: 10_000 });
    },
  );
}

async function scrubMs(
  page: Page,
  base: string,
  goalId: number,
  steps: number,
): Promise<{ subject: number[]; baseline: number[] }> {
  await page.goto(`${base}/goals/${goalId}`);
  await page.getByRole('button', { name: 'Open the history' }).click();
  const slider = page.getByRole('slider');
  await slider.waitFor();
  const max = Number(await slider.getAttribute('max'));
  let i = 0;
  return alternateMs(
    steps,
    2,
    () => page.evaluate((id) => fetch(`/api/goals/${id}?view=tree`).then((r) => r.text()), goalId),
    async () => {
      i += 1;
      // A spread of stops over the whole history, forwards and backwards (a fixed sequence: runs compare).
      await slider.fill(String(Math.floor((((i * 7919) % 997) / 997) * max)));
      const position = /position (\d+)/.exec((await slider.getAttribute('aria-valuetext')) ?? '')?.[1];
      await page.waitForFunction(
        (p) => document.body.textContent?.includes(`as it was at position ${p} (`) ?? false,
        position,
      );
    },
  );
}

export function serveStatic(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html),
  );
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        close: () => closeServer(server),
      }),
    ),
  );
}
