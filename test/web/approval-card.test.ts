/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { AppBridge, getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { Browser, Page } from 'playwright-core';
import { readStream } from '../../src/engine/store.js';
import { getMessage } from '../../src/projections/channel-queries.js';
import { tasksOfGoal } from '../../src/projections/task-queries.js';
import { HOSTILE_TITLE, proposeHostileTree, type PendingTree } from '../helpers/approval-card.js';
import { launchBrowser } from '../../testkit/browser.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * The approval card in chromium, decided through a host. The test is the host: a page served
 * over a real socket embeds the card's HTML — read from Colony with resources/read — in a sandboxed
 * iframe under a CSP with no network, and ext-apps' AppBridge (the host side) connects it to a real MCP
 * Client of Colony, forwarding the View's tools/call. The bridge runs in this process; the page relays
 * the postMessage traffic to it. The test sends review_proposal's result, clicks Approve in the iframe,
 * and finds the approval in Colony's log. Screenshots: /tmp/card-light.png, /tmp/card-dark.png, /tmp/card-approved.png.
 */
const CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'";
const HOST_PAGE = `<!doctype html><meta charset="utf-8"><title>Test host</title>
<style>body { margin: 0; padding: 12px; background: #8a8f98; } iframe { border: 0; width: 640px; height: 200px; display: block; }</style>
<iframe id="card" title="Approval card" sandbox="allow-scripts" src="/card"></iframe>
<script>
  const frame = document.getElementById('card');
  addEventListener('message', (e) => { if (e.source === frame.contentWindow) window.__toHost(e.data); });
</script>`;

/** The host's end of the View's postMessage channel, relayed through the page (the bridge lives in this process). */
class PageRelay implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(private readonly page: Page) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    await this.page.evaluate(
      (m) => (document.getElementById('card') as HTMLIFrameElement).contentWindow!.postMessage(m, '*'),
      message as unknown,
    );
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
}

let f: HttpFixture;
let pending: PendingTree;
let client: ClientV2;
let host: Server;
let hostUrl: string;
let browser: Browser;

before(async () => {
  f = await httpFixture({ agentTools: ['whoami', 'create_goal', 'propose_task_tree'] });
  pending = await proposeHostileTree(await f.connect(f.ownerToken), await f.connect(f.agentToken));
  client = new ClientV2({ name: 'test-host', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', f.base), {
      requestInit: { headers: { Authorization: `Bearer ${f.ownerToken}` } },
    }),
  );
  // As a host does: the tool names its UI, the UI is a resource.
  const tool = (await client.listTools()).tools.find((t) => t.name === 'review_proposal')!;
  const uri = getToolUiResourceUri(tool)!;
  const html = ((await client.readResource({ uri })).contents[0] as { text: string }).text;
  host = createServer((req, res) => {
    if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HOST_PAGE);
    if (req.url === '/card')
      return void res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP })
        .end(html);
    res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end(); // the browser asks for the host page's icon; that is not the card's doing
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://127.0.0.1:${(host.address() as { port: number }).port}`;
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await client?.close();
  await new Promise<void>((resolve) => (host ? host.close(() => resolve()) : resolve()));
  await f?.close();
});

describe('the approval card in chromium, through a host', () => {
  it('shows the proposal (commands first, hostile text as text), in light and dark, and Approve approves it in Colony', async () => {
    const page = await browser.newPage({ viewport: { width: 680, height: 1100 } });
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => void requests.push(r.url()));
    page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
    page.on('pageerror', (e) => void problems.push(e.message));
    const relay = new PageRelay(page);
    await page.exposeFunction('__toHost', (m: JSONRPCMessage) => relay.onmessage?.(m));
    const bridge = new AppBridge(
      client,
      { name: 'test-host', version: '0' },
      { serverTools: {}, logging: {} },
      { hostContext: { theme: 'light', displayMode: 'inline' } },
    );
    const initialized = new Promise<void>((resolve) => bridge.addEventListener('initialized', () => resolve()));
    bridge.addEventListener('sizechange', ({ height }) => {
      if (height)
        void page.evaluate((h) => {
          document.getElementById('card')!.style.height = `${h}px`;
        }, height);
    });
    await bridge.connect(relay);
    await page.goto(hostUrl);
    await initialized;

    const result = (await client.callTool({ name: 'review_proposal', arguments: {} })) as CallToolResult;
    await bridge.sendToolInput({ arguments: {} });
    await bridge.sendToolResult(result);
    const card = page.frameLocator('#card');
    await card.locator('#status[data-status="pending"]').waitFor();
    const data = result.structuredContent as { commands: string[]; goal_id: number };
    assert.deepEqual(await card.locator('.cmd').allTextContents(), data.commands, 'every command line, in full');
    const y = async (id: string) => (await card.locator(`#${id}`).boundingBox())!.y;
    assert.ok(
      (await y('commands-section')) < (await y('goal-section')) &&
        (await y('goal-section')) < (await y('tree-section')) &&
        (await y('tree-section')) < (await y('decide')),
      'commands first, buttons last',
    );
    assert.equal(await card.locator('#goal').textContent(), `Goal #${data.goal_id} — ${HOSTILE_TITLE}`);
    assert.match(
      (await card.locator('#reasoning').textContent())!,
      /^Trust me \\u202eevil\\u202c <b>bold<\/b> <!-- <script>/,
    );
    assert.equal(await card.locator('img, b').count(), 0, 'agent text made no elements');
    assert.equal(await card.locator('script').count(), 1, "only the card's own script");
    const frame = page.frames().find((x) => x.url().endsWith('/card'))!;
    assert.equal(await frame.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);

    // A screenshot once the host has applied the card's last size change (autoResize reports the document's height).
    const shoot = async (path: string) => {
      const height = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
      await page.waitForFunction((h) => document.getElementById('card')!.getBoundingClientRect().height >= h, height);
      await page.locator('#card').screenshot({ path });
    };
    await card.locator('html[data-theme="light"]').waitFor({ state: 'attached' });
    await shoot('/tmp/card-light.png');
    bridge.setHostContext({ theme: 'dark', displayMode: 'inline' });
    await card.locator('html[data-theme="dark"]').waitFor({ state: 'attached' });
    await shoot('/tmp/card-dark.png');
    const darkBg = await frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(darkBg, 'rgb(31, 31, 34)', 'the dark fallback colours apply');

    // Reject needs a reason: nothing is sent, nothing is written.
    const head = f.eventCount();
    await card.locator('#reject').click();
    await card.locator('#outcome[data-kind="error"]', { hasText: 'Give a reason' }).waitFor();
    assert.equal(f.eventCount(), head);

    await card.locator('#approve').click();
    await card.locator('#outcome[data-kind="approved"]').waitFor();
    assert.match(
      (await card.locator('#outcome').textContent())!,
      /^Approved proposal \d+: created tasks \d+, \d+, \d+\nCommands it runs on this host/,
    );
    assert.equal(await card.locator('#status').textContent(), 'approved');
    assert.equal(await card.locator('#approve').isDisabled(), true);
    assert.equal(await card.locator('#reject').isDisabled(), true);
    await shoot('/tmp/card-approved.png');

    const db = f.app.engine.db;
    const approved = readStream(db, `proposal-${pending.proposalId}`).find((e) => e.type === 'ProposalApproved');
    assert.equal(approved?.meta.actor, 'user:owner', 'approved by the owner, through the host');
    assert.equal(tasksOfGoal(db, pending.goalId).length, 3);
    assert.deepEqual(getMessage(db, pending.messageId)?.reactions, [{ reaction: 'approve', by: 'owner' }]);
    assert.deepEqual(
      requests.filter((u) => !u.endsWith('/favicon.ico')),
      [`${hostUrl}/`, `${hostUrl}/card`],
      'the card loaded nothing',
    );
    assert.deepEqual(problems, []);
    await page.close();
  });
});
