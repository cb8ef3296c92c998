/// <reference lib="dom" />
/**
 * Screenshots of every console page, light and dark, on a Colony with a bit of everything (goals, a
 * tree at work, a pending proposal that runs a command, a resource request, a quarantined agent, runs
 * with transcripts, a hostile title). Not a test: a tool to look at the pages.
 *   node --import tsx test/web/screenshots.ts OUT_DIR [WIDTHS]
 * WIDTHS: comma-separated viewport widths, 1280 when absent (`1280,390`: a phone too; a width other than
 * 1280 is in the file name: `agent-dark-390.png`).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { decideAuthorization, revokeGrant } from '../../src/actions/oauth.js';
import { addRecipe } from '../../src/actions/verifiers.js';
import { updateAgent } from '../../src/actions/agents.js';
import { registerAgent } from '../../src/actions/principals.js';
import { recordEvidence } from '../../src/actions/reputation.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { finishRun, recordSessionMessage, requestRun, startQueuedRun } from '../../src/actions/runs.js';
import { configureRuntime, startAgent, stopAgent } from '../../src/actions/runs/agent-controls.js';
import { launchBrowser } from '../../testkit/browser.js';
import { ok } from '../helpers/calls.js';
import { httpFixture } from '../helpers/mcp-http.js';
import { finishAuthorization, MemoryProvider, pollDecision, startAuthorization } from '../helpers/oauth.js';
import { setServedUrl } from '../../src/public-url.js';

const out = process.argv[2] ?? '/tmp/colony-screens';
const widths = (process.argv[3] ?? '1280').split(',').map(Number);
mkdirSync(out, { recursive: true });
const f = await httpFixture({
  agentTools: [
    'create_goal',
    'propose_task_tree',
    'claim_task',
    'complete_task',
    'report_usage',
    'request_resource',
    'send_message',
    'whoami',
  ],
});
const owner = await f.connect(f.ownerToken);
const agent = await f.connect(f.agentToken);
const by = { key: 'user-1', name: 'owner', tenant: 1 };
addRecipe(
  f.app,
  by,
  {
    name: 'unit-tests',
    command: 'npm test -- --reporter=dot && test -s coverage/summary.json',
    cwd: null,
    writable: false,
    timeoutSec: 300,
    secrets: [],
  },
  { actor: 'user:owner' },
);

// Autonomous, so that its tree in the auto goal is approved at once (a supervised agent's waits for the owner).
await ok(owner, 'update_agent', { agent_id: f.agentId, autonomy_tier: 'autonomous' });
const g1 = await ok(owner, 'create_goal', {
  title: 'Ship the billing export',
  description: 'CSV export of invoices for the finance team.',
  coordinator_config: 'worker',
  approval_mode: 'auto',
  budget_tokens: 200_000,
  budget_dollars_cents: 2_000,
});
const tree = await ok(agent, 'propose_task_tree', {
  goal_id: g1.goal_id,
  reasoning: 'Schema first, then the exporter, then tests.',
  tree: {
    title: 'Billing export',
    description: 'The whole export, end to end.',
    billing_code: 'billing',
    children: [
      {
        title: 'Design the CSV schema',
        description: 'Columns, types and escaping rules.',
        acceptance_criteria: 'A reviewed schema document.',
      },
      {
        title: 'Write the exporter',
        description: 'Stream invoices to CSV without loading them all.',
        verifier_config: { kind: 'command', recipe: 'unit-tests' },
        children: [
          { title: 'Paging over invoices', description: 'Keyset pagination over the invoice table.' },
          { title: 'Escape hostile fields', description: 'Quotes, newlines and formulas in customer names.' },
        ],
      },
      { title: 'Document the export', description: 'How finance runs it and what each column means.' },
    ],
  },
});
const [, schema, , paging, escape] = tree.task_ids as number[];
for (const id of [schema!, paging!]) {
  await ok(agent, 'claim_task', { task_id: id });
  await ok(agent, 'report_usage', { task_id: id, tokens: 42_000, cost_cents: 380 });
  await ok(agent, 'complete_task', { task_id: id, summary: 'Done and checked.' });
}
await ok(agent, 'claim_task', { task_id: escape! });
await ok(agent, 'send_message', {
  channel: `goal-${g1.slug as string}`,
  body: 'Escaping is harder than it looks: a name starting with = is a formula in spreadsheets.',
});
await ok(agent, 'request_resource', {
  name: 'BILLING_DB_URL',
  resource_type: 'url',
  reason: 'The exporter needs read access to the invoices.',
  task_id: escape!,
});

await ok(owner, 'create_goal', {
  title: '<img src=x onerror=alert(1)> \u001b[2K hostile title',
  description: 'An agent-written title that must stay text.',
  coordinator_config: 'worker',
});
const g3 = await ok(agent, 'create_goal', {
  title: 'Migrate the docs site',
  description: 'Move the docs to the new generator.',
  coordinator_config: 'worker',
  budget_dollars_cents: 500,
});
await ok(agent, 'propose_task_tree', {
  goal_id: g3.goal_id,
  reasoning: "Two steps; the second is checked by the owner's test recipe.",
  tree: {
    title: 'Docs migration',
    description: 'Move every page and keep the links.',
    children: [
      { title: 'Convert the pages', description: 'Markdown to the new front matter.' },
      {
        title: 'Check every link',
        description: 'No link may break.',
        verifier_config: { kind: 'command', recipe: 'unit-tests' },
      },
    ],
  },
});

updateAgent(f.app, 1, f.agentId, { command: 'true' }, { actor: 'user:owner' });
const q = requestRun(f.app, {
  agentId: f.agentId,
  source: 'manual',
  by: 'user-1',
  prompt: 'Report on the billing export.',
});
if (q.kind === 'queued' && startQueuedRun(f.app, q.run.runId)) {
  recordSessionMessage(f.app, q.run.runId, 'agent', 'Schema done, exporter half way; escaping in progress.');
  finishRun(f.app, q.run.runId, {
    status: 'succeeded',
    exitCode: 0,
    signal: null,
    durationMs: 4200,
    tokensIn: 1200,
    tokensOut: 340,
    costCents: 3,
    outputTail: 'ok',
    agentText: 'Report sent.',
  });
}
// Runs that did not succeed: one failed with a reason (its cost unknown), one timed out, one refused (the agent stopped).
const asOwner = { actor: 'user:owner' };
configureRuntime(f.app, 1, f.agentId, { cooldownSec: 0 }, 'owner', asOwner);
for (const status of ['failed', 'timed_out'] as const) {
  const r = requestRun(f.app, {
    agentId: f.agentId,
    source: 'manual',
    by: 'user-1',
    prompt: 'Escape the hostile fields.',
  });
  if (r.kind !== 'queued' || !startQueuedRun(f.app, r.run.runId)) continue;
  finishRun(f.app, r.run.runId, {
    status,
    exitCode: status === 'failed' ? 1 : null,
    signal: status === 'failed' ? null : 'SIGKILL',
    durationMs: status === 'failed' ? 61_000 : 900_000,
    tokensIn: 147,
    tokensOut: 5,
    costCents: 0,
    costKnown: false,
    billingLane: 'subscription',
    runtime: 'claude-code',
    ...(status === 'failed'
      ? {
          cause: 'error_result',
          reason: `the agent's CLI ended with an error: API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CXyZabcdefghijklmnop"}`,
        }
      : {}),
    outputTail: 'error',
    agentText: null,
  });
}
// More agents: one Claude Code runs with its model, a spawned one OpenCode runs with the CLI's default
// (its model is not one OpenCode takes), quarantined after a bad verdict.
const agentSpec = { ownerId: 1, systemPrompt: 'You check things.', toolScope: ['whoami'], command: null };
const reviewer = registerAgent(
  f.app,
  {
    ...agentSpec,
    name: 'reviewer',
    model: 'sonnet',
    tier: 'supervised',
    runtime: 'claude-code',
    parentId: null,
    spawnDepth: 0,
  },
  asOwner,
);
const nightly = registerAgent(
  f.app,
  {
    ...agentSpec,
    name: 'nightly-checks',
    model: 'a-very-long-model-name-that-opencode-does-not-take-2026-12-01',
    tier: 'supervised',
    runtime: 'opencode',
    parentId: reviewer.agentId,
    spawnDepth: 1,
  },
  asOwner,
);
recordEvidence(f.app, getAgent(f.app.engine.db, nightly.agentId)!, 'default', -1, 'verdict: rejected twice', asOwner);
stopAgent(f.app, 1, f.agentId, 'user-1', 'Paused for the night.', asOwner);
requestRun(f.app, { agentId: f.agentId, source: 'manual', by: 'user-1', prompt: 'One more report.' });
startAgent(f.app, 1, f.agentId, 'user-1', asOwner);

// OAuth apps: an application holding a grant as the agent (and one revoked as the owner), another waiting, with a hostile name.
setServedUrl(f.base);
const desktop = new MemoryProvider('http://127.0.0.1:53682/callback', 'Claude Desktop');
for (const as of ['owner', 'agent'] as const) {
  desktop.saved = undefined;
  const asked = await startAuthorization(f, desktop);
  const principal =
    as === 'owner'
      ? { kind: 'user' as const, id: 1, ownerId: 1 }
      : { kind: 'agent' as const, id: f.agentId, ownerId: 1 };
  decideAuthorization(
    f.app,
    { decision: 'approve', userCode: asked.userCode, via: 'cli', decidedBy: { kind: 'user', id: 1 }, principal },
    { actor: 'user:owner' },
  );
  await finishAuthorization(f, desktop, (await pollDecision(f, asked.requestId)).redirect!);
}
revokeGrant(f.app, 1, 'owner', { actor: 'user:owner' });
await startAuthorization(
  f,
  new MemoryProvider('https://app.example.com/oauth/callback', '<img src=x onerror=alert(1)> Totally Legit Tool'),
);

const browser = await launchBrowser();
for (const [scheme, width] of widths.flatMap((w) => (['light', 'dark'] as const).map((s) => [s, w] as const))) {
  const page = await (
    await browser.newContext({ colorScheme: scheme, viewport: { width, height: width === 1280 ? 860 : 844 } })
  ).newPage();
  const suffix = width === 1280 ? '' : `-${width}`;
  await page.goto(`${f.base}/`);
  await page.getByLabel('Token').fill(f.ownerToken);
  await page.screenshot({ path: join(out, `login-${scheme}${suffix}.png`) });
  await page.getByRole('button', { name: 'Sign in' }).click();
  const shots: [string, string, (() => Promise<void>)?][] = [
    ['needs-you', '/'],
    ['not-found', '/goals/abc'],
    ['goals', '/goals'],
    ['goal', `/goals/${g1.goal_id}`],
    [
      'goal-time-travel',
      `/goals/${g1.goal_id}`,
      async () => {
        await page.getByRole('button', { name: 'Open the history' }).click();
        const slider = page.getByRole('slider');
        await slider.waitFor();
        await slider.fill('6');
        await page.waitForTimeout(300);
      },
    ],
    ['approvals', '/approvals'],
    ['agents', '/agents'],
    ['agent', '/agents/worker'],
    [
      'agent-run',
      '/agents/worker',
      async () => {
        await page.getByRole('button', { name: '#1', exact: true }).click();
        await page.locator('ol[aria-label="Transcript of run 1"]').waitFor();
      },
    ],
    ['agent-quarantined', '/agents/nightly-checks'],
    ['requests', '/requests'],
    ['audit', '/audit'],
    ['audit-filtered', '/audit?tool=claim_task&outcome=success'],
    ['oauth', '/oauth'],
  ];
  for (const [name, path, act] of shots) {
    await page.goto(`${f.base}${path}`);
    await page.waitForLoadState('networkidle').catch(() => undefined);
    await page.waitForTimeout(250);
    if (act) await act();
    await page.screenshot({ path: join(out, `${name}-${scheme}${suffix}.png`), fullPage: true });
    const [wide, viewport] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
    if (wide! > viewport!) process.stdout.write(`${name} (${scheme}, ${width} px) scrolls sideways: ${wide} px\n`);
  }
}
await browser.close();
await f.close();
process.stdout.write(`screenshots in ${out}\n`);
