/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auth } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { issueGrant } from '../../src/actions/oauth.js';
import { launchBrowser } from '../../testkit/browser.js';
import type { HttpFixture } from '../helpers/mcp-http.js';
import {
  challengedMetadataUrl,
  finishAuthorization,
  MemoryProvider,
  oauthFixture,
  pkcePair,
  pollDecision,
  startAuthorization,
} from '../helpers/oauth.js';

/**
 * OAuth apps in the console, in chromium: an application's authorization request (a real GET
 * /oauth/authorize, without the console cookie, as when a remote client sends the browser cross-site)
 * appears on /oauth without a reload, its hostile name as text; the owner approves it as an agent; the
 * waiting page's status endpoint then carries the code, whose token acts as that agent; the grant shows
 * up live under the application. Sent cross-site (the SameSite=Strict console cookie stays behind), the
 * waiting page shows no buttons but links to the console, which opens signed in, and the page goes on by
 * itself once the owner approves there. An agent's session sees no OAuth apps.
 */
const HOSTILE = '<img src=x onerror="window.__pwned=1"> Totally Legit';
let f: HttpFixture;
let browser: Browser;
let page: Page;

before(async () => {
  f = await oauthFixture({ agentTools: ['whoami', 'read_inbox'] });
  browser = await launchBrowser();
  page = await (await browser.newContext()).newPage();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

const signIn = async (p: Page, token: string): Promise<void> => {
  await p.goto(`${f.base}/oauth`);
  await p.getByLabel('Token').fill(token);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { name: 'OAuth apps' }).waitFor();
};

describe('OAuth apps in the console', () => {
  it('a waiting request is counted live but never listed; found by its code, approved as an agent, its token acts as that agent', async () => {
    await signIn(page, f.ownerToken);
    assert.equal(
      await page.getByRole('navigation').getByRole('link', { name: 'OAuth apps' }).getAttribute('aria-current'),
      'page',
    );
    await page.getByText('No request is waiting.').waitFor();

    const provider = new MemoryProvider('http://127.0.0.1:53682/callback', HOSTILE);
    const asked = await startAuthorization(f, provider);
    await page.getByText('1 waiting.').waitFor({ timeout: 6_000 });
    assert.equal(
      await page.locator(`[data-oauth-code]`).count(),
      0,
      'no request, and no code, is shown before the owner types one',
    );
    assert.equal((await page.content()).includes(asked.userCode), false);
    await page.getByLabel("Code on the application's page").fill('zzzz-zzzz');
    await page.getByRole('button', { name: 'Find' }).click();
    await page
      .getByRole('alert')
      .getByText(/ErrNotFound/)
      .waitFor();
    await page.getByLabel("Code on the application's page").fill(asked.userCode.toLowerCase());
    await page.getByRole('button', { name: 'Find' }).click();
    const card = page.locator(`[data-oauth-code="${asked.userCode}"]`);
    await card.waitFor({ timeout: 6_000 });
    assert.equal(await card.locator('.user-code').textContent(), asked.userCode);
    assert.equal(await card.locator('strong').textContent(), HOSTILE);
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);

    await card.getByLabel('Act as').selectOption('agent:worker');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached' });
    await page.getByText(`Approved ${asked.userCode} as agent worker`).waitFor();

    const decision = await pollDecision(f, asked.requestId, 0);
    assert.equal(decision.status, 'approved');
    await finishAuthorization(f, provider, decision.redirect!);
    const me = (await (await f.connect(provider.saved!.access_token)).callTool({ name: 'whoami', arguments: {} }))
      .structuredContent as { kind: string; name: string };
    assert.deepEqual([me.kind, me.name], ['agent', 'worker']);

    // The grant is an event: the applications list refreshes from the stream.
    const grant = page.locator(
      `[data-client-id="${provider.info!.client_id}"] tr[data-grant-id][data-status="active"]`,
    );
    await grant.waitFor({ timeout: 6_000 });
    assert.match((await grant.textContent()) ?? '', /agent worker/);
  });

  it('sent cross-site by the application, the waiting page links to the signed-in console, and goes on by itself once approved there', async () => {
    const provider = new MemoryProvider('http://127.0.0.1:53682/callback', 'Cross-site app');
    assert.equal(
      await auth(provider, { serverUrl: `${f.base}/mcp`, resourceMetadataUrl: await challengedMetadataUrl(f) }),
      'REDIRECT',
    );
    const context = page.context();
    // The application's own site, and its callback: neither exists, the browser gets them from here.
    await context.route('https://claude.example/**', (r) =>
      r.fulfill({
        contentType: 'text/html',
        body: `<a id="go" href="${provider.authorizationUrl!.href.replace(/&/g, '&amp;')}">Connect Colony</a>`,
      }),
    );
    await context.route('http://127.0.0.1:53682/**', (r) =>
      r.fulfill({ contentType: 'text/html', body: 'back in the application' }),
    );
    const app = await context.newPage();
    await app.goto('https://claude.example/connect');
    await app.click('#go');
    await app.waitForURL(/\/oauth\/authorize\?/);
    const code = (await app.locator('.code').textContent())!;
    assert.equal(
      await app.locator('form').count(),
      0,
      'cross-site: the console cookie did not come along, so no buttons',
    );
    const [consoleTab] = await Promise.all([
      context.waitForEvent('page'),
      app.getByRole('link', { name: 'OAuth apps' }).click(),
    ]);
    await consoleTab.getByLabel("Code on the application's page").fill(code);
    await consoleTab.getByRole('button', { name: 'Find' }).click();
    const card = consoleTab.locator(`[data-oauth-code="${code}"]`);
    await card.waitFor({ timeout: 6_000 });
    await card.getByRole('button', { name: 'Approve' }).click();
    await app.waitForURL(/^http:\/\/127\.0\.0\.1:53682\/callback\?code=/, { timeout: 6_000 });
    assert.equal(new URL(app.url()).searchParams.get('state'), 'state-xyz');
    await Promise.all([app.close(), consoleTab.close()]);
  });

  it('an application an older Colony logged with hidden characters in its name is listed with each one escaped', async () => {
    // Registration refuses such a name now (oauth-redirects.ts); a client logged before keeps it in the log.
    const hidden = 'Colony Helper\u202e\u200f\u200b\u2060\u{e0041}fdp.exe';
    const { verifier, challenge } = pkcePair();
    const client = {
      clientId: 'colony-client-legacy-console',
      kind: 'dcr' as const,
      clientName: hidden,
      redirectUris: ['https://helper.example/cb'],
    };
    issueGrant(
      f.app,
      client,
      {
        clientId: client.clientId,
        clientName: hidden,
        redirectUri: client.redirectUris[0]!,
        codeChallenge: challenge,
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        resource: `${f.base}/mcp`,
        scopes: ['mcp'],
        principal: { kind: 'user', id: 1, ownerId: 1 },
        approvalN: 1,
      },
      { clientId: client.clientId, redirectUri: client.redirectUris[0]!, codeVerifier: verifier, resource: null },
    );
    const card = page.locator('[data-client-id="colony-client-legacy-console"]');
    await card.waitFor({ timeout: 6_000 });
    assert.equal(
      await card.locator('strong').first().textContent(),
      'Colony Helper\\u202e\\u200f\\u200b\\u2060\\udb40\\udc41fdp.exe',
    );
    assert.equal(
      await card.getAttribute('aria-label'),
      'Application Colony Helper\\u202e\\u200f\\u200b\\u2060\\udb40\\udc41fdp.exe',
    );
  });

  it("an agent's session has no OAuth apps link, and the page says only the owner manages them", async () => {
    const agentPage = await (await browser.newContext()).newPage();
    await signIn(agentPage, f.agentToken);
    await agentPage.getByText('Only the owner approves and manages OAuth applications.').waitFor();
    assert.equal(await agentPage.getByRole('navigation').getByRole('link', { name: 'OAuth apps' }).count(), 0);
    await agentPage.context().close();
  });
});
