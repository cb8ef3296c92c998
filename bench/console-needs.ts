import type { Page } from 'playwright-core';
import type { App } from '../src/app.js';
import { serveStatic, signedIn } from './console.js';
import type { Team } from './goal-data.js';
import { pendingProposals, pendingRequests } from './needs-data.js';
import { alternateMs, figure, latencyFigures, median, type Figure } from './util.js';

/**
 * The console's landing page, "Needs you" (GET /api/attention), in chromium, on the goal benchmarks' store
 * (`goals` goals × 1,000 tasks) plus what waits on the owner, seeded before any timing:
 * - console_needs_ms: navigation to `/`, signed in, until every pending item is rendered (30 task-tree
 *   proposals, 20 resource requests) — against the same rendered HTML served static, same browser and run.
 *   Target < 300 ms.
 * - console_decision_ms / _p95: a decision's round trip — "Approve" clicked on a proposal's card in one
 *   tab → the card gone from that tab and from a second tab of the same session (through the event
 *   stream) — against the same decision as a bare POST /api/proposals/:id/approve from the page: what
 *   the server itself costs. A fresh pending proposal for each sample of either.
 */
export interface NeedsSize {
  /** Goals of 1,000 tasks in the store (for the figure's data column). */
  goals: number;
  /** Navigations to `/` (and to the static page). */
  runs: number;
  /** Decisions timed (and as many raw approvals), after one warm-up of each. */
  decisions: number;
}

const PROPOSALS = 30;
const REQUESTS = 20;
const WARMUP = 1;
const ITEMS = '[data-proposal-id], [data-request-id]';

export async function benchConsoleNeeds(
  app: App,
  team: Team,
  goalId: number,
  size: NeedsSize,
): Promise<Record<string, Figure>> {
  pendingProposals(app, team, PROPOSALS);
  pendingRequests(app, team, goalId, REQUESTS);
  return signedIn(app, team, async (page, base) => {
    const first = await needsMs(page, base, size);
    // Seeded after the first figure, so that page shows exactly its 50 items.
    const pool = pendingProposals(app, team, 2 * (size.decisions + WARMUP));
    const shown = PROPOSALS + REQUESTS + pool.length;
    const ms = await decisionMs(page, base, pool, size.decisions);
    const data = `Approve clicked in tab A → card gone from tabs A and B; ${size.decisions} samples, ${shown} items shown at first`;
    return { ...first, ...latencyFigures('console_decision', ms, data) };
  });
}

const itemsShown = (page: Page, n: number) =>
  page.waitForFunction(([sel, min]) => document.querySelectorAll(sel).length >= min, [ITEMS, n] as const);

async function needsMs(page: Page, base: string, { runs, goals }: NeedsSize): Promise<Record<string, Figure>> {
  const items = PROPOSALS + REQUESTS;
  const load = async () => {
    await page.goto(`${base}/`);
    await itemsShown(page, items);
  };
  await load();
  // The same markup without the app's script: what the browser costs to fetch and lay out that much HTML.
  const html = (await page.content()).replace(/<script[\s\S]*?<\/script>/g, '');
  const payload = await attentionRead(page);
  const staticPage = await serveStatic(html);
  try {
    const t = await alternateMs(runs, 2, () => page.goto(staticPage.url).then(() => itemsShown(page, items)), load);
    return {
      console_needs_ms: {
        ...figure(median(t.subject), 'ms', median(t.baseline)),
        data:
          `${PROPOSALS} proposals + ${REQUESTS} requests pending over ${goals} goals × 1,000 tasks; GET /api/attention ${payload.bytes.toLocaleString('en-US')} B ` +
          `in ${payload.ms.toFixed(1)} ms, page ${Buffer.byteLength(html).toLocaleString('en-US')} B`,
      },
    };
  } finally {
    await staticPage.close();
  }
}

/** The attention read from the page: its size, and the median of a few reads' times. */
async function attentionRead(page: Page): Promise<{ bytes: number; ms: number }> {
  const reads = [];
  for (let i = 0; i < 5; i++)
    reads.push(
      await page.evaluate(async () => {
        const t0 = performance.now();
        const bytes = (await (await fetch('/api/attention')).arrayBuffer()).byteLength;
        return { bytes, ms: performance.now() - t0 };
      }),
    );
  return { bytes: reads[0]!.bytes, ms: median(reads.map((r) => r.ms)) };
}

/** Untimed waits poll on a timer: a page that is not the front tab may not run animation frames for a while. */
const gone = (page: Page, id: number) =>
  page.waitForFunction((i) => !document.querySelector(`[data-proposal-id="${i}"]`), id, {
    timeout: 10_000,
    polling: 10,
  });
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/**
 * Both sides are timed in the page, on the browser's clock (the tabs share it), so neither carries the
 * driver's round trips: the raw POST's own duration; the click → the card leaving the DOM of each tab (a
 * MutationObserver's moment), the later of the two.
 */
async function decisionMs(
  a: Page,
  base: string,
  pool: number[],
  decisions: number,
): Promise<{ subject: number[]; baseline: number[] }> {
  const b = await a.context().newPage();
  const all = PROPOSALS + REQUESTS + pool.length;
  await Promise.all([a, b].map((p) => p.goto(`${base}/`)));
  await Promise.all([a, b].map((p) => itemsShown(p, all).then(() => p.waitForSelector('.live-dot.on'))));
  const csrf = await a.evaluate(async () => ((await (await fetch('/api/session')).json()) as { csrf: string }).csrf);
  const out = { subject: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < WARMUP + decisions; i++) {
    const raw = pool.pop()!;
    const rawMs = await a.evaluate(approve, { id: raw, csrf });
    // Untimed: both tabs catch up with that decision (and the stream's trailing refresh) before the next.
    await Promise.all([gone(a, raw), gone(b, raw)]).then(settle);
    const clicked = pool.pop()!;
    await Promise.all([a, b].map((p) => p.evaluate(watchGone, clicked)));
    const at = await a.evaluate(click, clicked);
    const [goneA, goneB] = await Promise.all([a, b].map((p) => p.evaluate(() => (window as Watched).goneAt!)));
    await settle();
    if (i >= WARMUP) {
      out.baseline.push(rawMs);
      out.subject.push(Math.max(goneA!, goneB!) - at);
    }
  }
  await b.close();
  return out;
}

type Watched = Window & { goneAt?: Promise<number> };
/** In the page: the moment (the browser's clock) proposal `id`'s card leaves the DOM, as `window.goneAt`. */
function watchGone(id: number): void {
  (window as Watched).goneAt = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`proposal ${id}'s card is still shown after 10 s`)), 10_000);
    const o = new MutationObserver(() => {
      if (document.querySelector(`[data-proposal-id="${id}"]`)) return;
      resolve(performance.timeOrigin + performance.now());
      o.disconnect();
      clearTimeout(timer);
    });
    o.observe(document.body, { childList: true, subtree: true });
  });
}

/** In the page: the owner's approval as the console's own call makes it (session cookie, CSRF header); its ms. */
async function approve({ id, csrf }: { id: number; csrf: string }): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`/api/proposals/${id}/approve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
    body: '{}',
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`approve ${id}: ${r.status} ${text}`);
  return performance.now() - t0;
}

/** In the page: the card's Approve button clicked (a DOM click: no pointer simulation), and when. */
function click(id: number): number {
  const card = document.querySelector(`[data-proposal-id="${id}"]`);
  const button = Array.from(card?.querySelectorAll('button') ?? []).find((x) => x.textContent?.trim() === 'Approve');
  if (!button) throw new Error(`no Approve button on proposal ${id}'s card`);
  const at = performance.timeOrigin + performance.now();
  button.click();
  return at;
}
