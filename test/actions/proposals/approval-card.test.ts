import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import type { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { createOwner } from '../../../src/actions/principals.js';
import { scriptSafe } from '../../../src/mcp/apps/view-runtime.js';
import { tasksOfGoal } from '../../../src/projections/task-queries.js';
import { ok, refused } from '../../helpers/calls.js';
import {
  HOSTILE_REASONING,
  HOSTILE_TITLE,
  proposeHostileTree,
  RECIPE_COMMAND,
  type PendingTree,
} from '../../helpers/approval-card.js';
import { httpFixture, type HttpFixture } from '../../helpers/mcp-http.js';

/**
 * The approval card through real clients of both revisions on a real `/mcp`: review_proposal
 * listed with `_meta.ui.resourceUri`, the card resource listed and read by owners only, its HTML
 * self-contained, and the tool's data — commands in full, hostile text untouched as data, the
 * oldest pending proposal by default, an agent proposal, clear errors. The card in a browser:
 * test/web/approval-card.test.ts.
 */
const CARD = 'ui://colony/approval-card';
let f: HttpFixture;
let owner: ClientV1;
let agent: ClientV1;
let tree: PendingTree;

async function v2(token: string): Promise<ClientV2> {
  const c = new ClientV2({ name: 'v2', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await c.connect(
    new HttpV2(new URL('/mcp', f.base), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return c;
}

/** The card's markup, its one style element and its one script, apart: each is checked for what loads things in its language. */
function partsOf(html: string): { markup: string; style: string; script: string } {
  const style = /<style>([^]*?)<\/style>/.exec(html)?.[1] ?? '';
  const script = /<script type="module">([^]*)<\/script>/.exec(html)?.[1] ?? '';
  assert.ok(style && script, 'one style and one module script');
  return { markup: html.replace(style, '').replace(script, ''), style, script };
}

/** Fails with the few characters around a match, not the half-megabyte document. */
function absent(text: string, re: RegExp): void {
  const m = re.exec(text);
  assert.equal(m, null, m ? `found ${JSON.stringify(text.slice(Math.max(0, m.index - 60), m.index + 60))}` : '');
}

before(async () => {
  f = await httpFixture({ agentTools: ['whoami', 'create_goal', 'propose_task_tree', 'propose_agent', 'get_goal'] });
  owner = await f.connect(f.ownerToken);
  agent = await f.connect(f.agentToken);
  tree = await proposeHostileTree(owner, agent);
});
after(async () => {
  await f?.close();
});

describe('the approval card over MCP, both revisions', () => {
  it('lists review_proposal with _meta.ui.resourceUri for owners (both revisions); agents do not see it', async () => {
    const modern = await v2(f.ownerToken);
    try {
      for (const tools of [(await owner.listTools()).tools, (await modern.listTools()).tools]) {
        const review = tools.find((t) => t.name === 'review_proposal');
        assert.ok(review, 'review_proposal listed');
        assert.deepEqual(review._meta, { ui: { resourceUri: CARD }, 'ui/resourceUri': CARD });
        assert.equal(review.annotations?.readOnlyHint, true);
        assert.equal(tools.find((t) => t.name === 'react')?._meta, undefined, 'other tools carry no _meta');
      }
    } finally {
      await modern.close();
    }
    assert.equal(
      (await agent.listTools()).tools.some((t) => t.name === 'review_proposal'),
      false,
    );
  });

  it('an owner lists and reads the card: text/html;profile=mcp-app, a CSP with nothing external, HTML that loads nothing', async () => {
    const listed = (await owner.listResources()).resources.find((r) => r.uri === CARD);
    assert.equal(listed?.mimeType, RESOURCE_MIME_TYPE);
    const modern = await v2(f.ownerToken);
    try {
      const [a, b] = [
        (await owner.readResource({ uri: CARD })).contents[0]!,
        (await modern.readResource({ uri: CARD })).contents[0]!,
      ];
      assert.deepEqual(a, b, 'the same card for both revisions');
      assert.equal(a.mimeType, 'text/html;profile=mcp-app');
      assert.deepEqual((a._meta as { ui: unknown }).ui, {
        csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
        prefersBorder: true,
      });
      const html = (a as { text: string }).text;
      assert.match(html, /^<!doctype html>/);
      assert.equal(html.match(/<script/gi)?.length, 1, 'one inline script');
      assert.equal(html.match(/<\/script/gi)?.length, 1, 'nothing inside it ends it early');
      assert.ok(!html.includes('<!--'), 'no comment opener that could swallow the end tag');
      // Nothing to load: no src/href in the markup, no url() or @import in the style, no fetch, socket or dynamic import in the script.
      const { markup, style, script } = partsOf(html);
      absent(markup, /\s(src|href|srcset|action|poster|data)\s*=|<link|<iframe|<img|<object|<embed|<base/i);
      absent(style, /url\(|@import/i);
      absent(
        script,
        /\bfetch\(|new WebSocket\(|new XMLHttpRequest|new EventSource\(|importScripts\(|\bimport\(|sendBeacon\(/,
      );
      // Agent-written text is never parsed as markup: the view writes text only.
      absent(html, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    } finally {
      await modern.close();
    }
  });

  it('an agent neither lists nor reads the card: not found, whatever its scope', async () => {
    assert.equal(
      (await agent.listResources()).resources.some((r) => r.uri === CARD),
      false,
    );
    await assert.rejects(
      agent.readResource({ uri: CARD }),
      (e: { code?: number; data?: { uri?: string } }) => e.code === -32602 && e.data?.uri === CARD,
    );
    const modern = await v2(f.agentToken);
    try {
      await assert.rejects(modern.readResource({ uri: CARD }), (e: { uri?: string }) => e.uri === CARD);
    } finally {
      await modern.close();
    }
  });

  it("review_proposal shows the oldest pending proposal: its commands in full, the tree, and the agent's text as it was written", async () => {
    const card = await ok(owner, 'review_proposal');
    assert.equal(card.proposal_id, tree.proposalId);
    assert.equal(card.message_id, tree.messageId);
    assert.equal(card.kind, 'tree');
    assert.equal(card.status, 'pending');
    assert.equal(card.goal_title, HOSTILE_TITLE);
    assert.equal(card.reasoning, HOSTILE_REASONING);
    assert.equal(card.proposer, 'worker');
    assert.equal(card.proposer_kind, 'agent');
    assert.deepEqual(card.commands, [
      `recipe "unit-tests": sh -c ${JSON.stringify(RECIPE_COMMAND)} in the task's project, else the assignee's working directory (read-only), timeout 120s`,
    ]);
    assert.deepEqual(card.tree_outline, [
      '- Check the docs [5000 tokens] (verifier: auto)',
      '  - Fix the broken links (verifier: command recipe "unit-tests")',
      '  - Rewrite the quick start (verifier: auto)',
    ]);
    assert.equal(card.agent, null);
    const text = ((await owner.callTool({ name: 'review_proposal', arguments: {} })).content as { text: string }[])[0]!
      .text;
    assert.ok(
      text.indexOf(RECIPE_COMMAND.slice(0, 20)) < text.indexOf('Check the docs'),
      'the text shows the commands before the tree',
    );
  });

  it("an unknown or another tenant's proposal is ErrProposalNotFound; nothing pending is ErrNotFound", async () => {
    await refused(f, owner, 'review_proposal', { proposal_id: 999 }, 'ErrProposalNotFound');
    const rival = createOwner(f.app, 'rival', { actor: 'system' });
    const other = await f.connect(rival.token);
    await refused(f, other, 'review_proposal', { proposal_id: tree.proposalId }, 'ErrProposalNotFound');
    const text = await refused(f, other, 'review_proposal', {}, 'ErrNotFound');
    assert.match(text, /no proposal is waiting for your decision/);
  });

  it("once decided it shows the outcome; an agent's spawn proposal gets the same card with the agent to be", async () => {
    await ok(owner, 'react', { message_id: tree.messageId, reaction: 'approve' });
    const decided = await ok(owner, 'review_proposal', { proposal_id: tree.proposalId });
    assert.equal(decided.status, 'approved');
    assert.equal(decided.decided_by, 'owner');
    const [root] = tasksOfGoal(f.app.engine.db, tree.goalId);
    const spawn = await ok(agent, 'propose_agent', {
      goal_id: tree.goalId,
      parent_task_id: root!.taskId,
      name: 'link-fixer',
      model: 'test-model',
      system_prompt: 'You fix broken links, one page at a time.',
      tool_scope: ['whoami'],
      autonomy_tier: 'supervised',
      reason: 'Links break faster than I can fix them.',
      mcp_servers: [{ name: 'linkcheck', url: 'http://127.0.0.1:9/mcp', transport: 'http' }],
    });
    const card = await ok(owner, 'review_proposal');
    assert.equal(card.proposal_id, spawn.proposal_id);
    assert.equal(card.kind, 'agent');
    assert.equal(card.reasoning, 'Links break faster than I can fix them.');
    assert.deepEqual(card.tree_outline, []);
    assert.deepEqual(card.commands, [], 'the proposer has no backend: approving runs nothing');
    const spec = card.agent as Record<string, unknown>;
    assert.equal(spec.name, 'link-fixer');
    assert.deepEqual(spec.tool_scope, ['whoami']);
    assert.deepEqual(spec.mcp_servers, [{ name: 'linkcheck', url: 'http://127.0.0.1:9/mcp', transport: 'http' }]);
  });

  it('inlined script text cannot end its <script> element early', () => {
    const safe = scriptSafe('const a = "</script><script>alert(1)</SCRIPT>"; const b = /<!--/; // </Script >');
    assert.doesNotMatch(safe, /<\/script|<!--/i);
    // The rewrites mean the same characters in JavaScript.
    assert.equal(new Function(`${scriptSafe('return "</script>" + "<!--";')}`)(), '</script><!--');
    assert.equal(new Function(`${scriptSafe('return /<\\/script>|<!--/u.source;')}`)(), '<\\/script>|\\x3C!--');
  });
});
