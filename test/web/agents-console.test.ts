/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { updateAgent } from '../../src/actions/agents.js';
import { registerAgent } from '../../src/actions/principals.js';
import { finishRun, requestRun, startQueuedRun } from '../../src/actions/runs.js';
import { configureRuntime, startAgent, stopAgent } from '../../src/actions/runs/agent-controls.js';
import { launchBrowser } from '../../testkit/browser.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * The agents, agent and integrity pages in a real chromium against the real server: at a phone's 390×844,
 * light and dark, no page is wider than the screen; a failed run says why, a refused one too, tokens and
 * cost are labelled ("cost unknown", never $0.00); what runs the agent is its command, not its model; the
 * audit trail is newest first with its filters in the address; an agent signed in reads a read-only page.
 */
const REASON = `the agent's CLI ended with an error: ${'x'.repeat(90)}{"type":"overloaded_error"}`;
const asOwner = { actor: 'user:owner' };
let f: HttpFixture;
let browser: Browser;
/** Any browser dialog (window.prompt, confirm, alert) a page opened: the console uses none. */
const dialogs: string[] = [];

before(async () => {
  f = await httpFixture({ agentTools: ['whoami'] });
  updateAgent(f.app, 1, f.agentId, { command: 'true' }, asOwner);
  configureRuntime(f.app, 1, f.agentId, { cooldownSec: 0 }, 'owner', asOwner);
  for (const status of ['succeeded', 'failed'] as const) {
    const q = requestRun(f.app, { agentId: f.agentId, source: 'manual', by: 'user-1', prompt: 'Report.' });
    assert.ok(q.kind === 'queued' && startQueuedRun(f.app, q.run.runId));
    finishRun(f.app, q.run.runId, {
      ...{ status, exitCode: status === 'failed' ? 1 : 0, signal: null, durationMs: 4200, tokensIn: 147, tokensOut: 5 },
      ...{ costCents: status === 'failed' ? 0 : 3, costKnown: status !== 'failed', billingLane: 'subscription' },
      ...{
        runtime: 'command',
        outputTail: 'ok',
        agentText: 'Done.',
        ...(status === 'failed' ? { reason: REASON } : {}),
      },
    });
  }
  stopAgent(f.app, 1, f.agentId, 'user-1', 'Paused for the night.', asOwner);
  assert.equal(requestRun(f.app, { agentId: f.agentId, source: 'manual', by: 'user-1' }).kind, 'refused');
  startAgent(f.app, 1, f.agentId, 'user-1', asOwner);
  // An agent with no runs whose command line and model are long unbroken strings: they wrap on a phone.
  const spec = { ownerId: 1, systemPrompt: 'Idle.', toolScope: ['whoami'], tier: 'supervised' as const };
  const long = {
    model: `m${'o'.repeat(120)}del`,
    command: `/opt/run${'-x'.repeat(70)}`,
    parentId: null,
    spawnDepth: 0,
  };
  registerAgent(f.app, { ...spec, ...long, name: 'idle-one' }, asOwner);
  const agent = await f.connect(f.agentToken);
  for (let i = 0; i < 3; i++) await agent.callTool({ name: 'whoami', arguments: {} });
  await agent.callTool({ name: 'no_such_tool', arguments: {} });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

/** A new browser session (its own cookies) at a phone's size, signed in with `token`. */
async function session(token: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const page = await (await browser.newContext({ colorScheme, viewport: { width: 390, height: 844 } })).newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(`${f.base}/agents`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Agents' }).waitFor();
  return page;
}

const width = (page: Page) =>
  page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));

async function fits(page: Page, path: string, ready: string): Promise<void> {
  await page.goto(`${f.base}${path}`);
  await page.locator(ready).first().waitFor();
  const w = await width(page);
  assert.ok(w.scroll <= w.inner, `${path} is ${w.scroll} px wide in a ${w.inner} px window`);
}

describe('the agents, agent and integrity pages in chromium', () => {
  for (const scheme of ['light', 'dark'] as const) {
    it(`fit a 390 px phone with no horizontal scroll (${scheme})`, async () => {
      const page = await session(f.ownerToken, scheme);
      await fits(page, '/agents', 'tr[data-agent="worker"]');
      await fits(page, '/agents/worker', 'tr[data-run]');
      await fits(page, '/agents/idle-one', 'text=No runs yet.');
      await fits(page, '/audit', 'tr[data-audit-id]');
    });
  }

  it('the agent page: why runs failed or were refused, labelled tokens and cost, what runs it', async () => {
    const page = await session(f.ownerToken);
    await page.goto(`${f.base}/agents/worker`);
    const run = (id: number) => page.locator(`tr[data-run="${id}"]`);
    const [succeeded, failed, refused] = [run(1), run(2), run(3)];
    await succeeded.waitFor();
    assert.match((await failed.textContent()) ?? '', /failed/);
    assert.ok(await failed.getByText(REASON).isVisible(), 'the failed run says why');
    assert.match((await failed.textContent()) ?? '', /147 in · 5 out tokens.*cost unknown.*\(subscription\)/s);
    assert.doesNotMatch((await page.locator('table[aria-label="Runs"]').textContent()) ?? '', /\$0\.00/);
    assert.match((await succeeded.textContent()) ?? '', /\$0\.03/);
    assert.match((await refused.textContent()) ?? '', /refused\s*\(stopped\).*agent worker is stopped/s);
    assert.equal((await page.locator('[data-runs-with]').textContent())?.trim(), 'command true');
    assert.match((await page.getByLabel('Configuration').textContent()) ?? '', /Model setting.*not used/s);
    // The owner's controls, without a browser dialog: stop with a reason, then start again.
    await page.getByLabel('Reason').fill('Only a test.');
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('h1 .badge', { hasText: 'stopped' }).waitFor();
    await page.getByRole('button', { name: 'Start' }).click();
    await page.locator('h1 .badge', { hasText: 'idle' }).waitFor();
    assert.deepEqual(dialogs, []);
  });

  it('the audit trail: newest first, its filters read from and written to the address', async () => {
    const page = await session(f.ownerToken);
    await page.goto(`${f.base}/audit`);
    await page.locator('tr[data-audit-id]').first().waitFor();
    const ids = await page
      .locator('tr[data-audit-id]')
      .evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-audit-id'))));
    assert.ok(ids.length >= 4, String(ids));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
      'newest first',
    );
    await page.goto(`${f.base}/audit?tool=whoami`);
    assert.equal(await page.getByLabel('Tool').inputValue(), 'whoami');
    await page.locator('tr[data-audit-id]').nth(2).waitFor();
    assert.deepEqual([...new Set(await page.locator('tr [data-label="Tool"]').allTextContents())], ['whoami']);
    await page.getByLabel('Outcome').selectOption('error');
    await page.waitForURL(/\/audit\?tool=whoami&outcome=error$/);
    await page.getByText('No tool call matches these filters.').waitFor();
  });

  it("an agent signed in reads its page, told it is read-only, with no owner's controls", async () => {
    const page = await session(f.agentToken);
    await page.goto(`${f.base}/agents/worker`);
    await page.locator('tr[data-run]').first().waitFor();
    assert.ok(
      await page
        .getByText(/read-only/i)
        .first()
        .isVisible(),
    );
    assert.equal(await page.getByRole('button', { name: /Stop|Start|Wake/ }).count(), 0);
    const w = await width(page);
    assert.ok(w.scroll <= w.inner, `${w.scroll} > ${w.inner}`);
  });
});
