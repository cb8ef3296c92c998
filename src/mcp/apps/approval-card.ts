import { readFileSync } from 'node:fs';
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { McpUiResourceMeta } from '@modelcontextprotocol/ext-apps';
import { scriptSafe, viewRuntime } from './view-runtime.js';

/**
 * The approval card: an MCP App (the UI-resources extension Claude and VS Code render) in which the
 * owner decides a proposal. review_proposal names it in its `_meta.ui.resourceUri`; the host reads this
 * resource and renders it in a sandboxed iframe; the card's buttons call `react` through the host.
 *
 * The HTML is static and self-contained — the View runtime, the styles and the View's code inlined, no
 * URL loaded — and holds no data: the proposal arrives as the tool result, so agent-written text never
 * becomes part of the document's source. Owners only (server-resources.ts): agents decide nothing.
 */
export const APPROVAL_CARD_URI = 'ui://colony/approval-card';
export const APPROVAL_CARD_MIME = RESOURCE_MIME_TYPE;

/** review_proposal's `_meta`: the modern key, and the flat one older hosts read (as ext-apps' registerAppTool writes both). */
export const approvalCardToolMeta: Readonly<Record<string, unknown>> = Object.freeze({
  ui: { resourceUri: APPROVAL_CARD_URI },
  [RESOURCE_URI_META_KEY]: APPROVAL_CARD_URI,
});

/** Nothing external: no fetch, no script, style, font or image from anywhere, no frames. Said explicitly rather than by omission. */
export const APPROVAL_CARD_META: { ui: McpUiResourceMeta } = {
  ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true },
};

export const approvalCardEntry = () => ({
  uri: APPROVAL_CARD_URI,
  name: 'approval-card',
  title: 'Approval card',
  mimeType: APPROVAL_CARD_MIME,
  _meta: APPROVAL_CARD_META,
  description:
    "The MCP App review_proposal opens: a pending proposal's commands (first, in full), goal, proposer, reasoning and task tree, with Approve and Reject.",
});

export const approvalCardContents = () => ({
  uri: APPROVAL_CARD_URI,
  mimeType: APPROVAL_CARD_MIME,
  text: approvalCardHtml(),
  _meta: APPROVAL_CARD_META,
});

let cached: string | null = null;

/** Built once per process (the runtime is ~0.5 MB); a missing or reshaped ext-apps package fails here, loudly. */
export function approvalCardHtml(): string {
  if (cached !== null) return cached;
  const asset = (name: string): string => readFileSync(new URL(name, import.meta.url), 'utf8');
  const css = asset('./approval-card.css').replace(/<\/(style)/gi, '<\\/$1');
  const script = scriptSafe(viewRuntime() + asset('./approval-card.view.js'));
  cached = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Colony approval card</title>',
    `<style>\n${css}</style>`,
    '</head>',
    '<body>',
    BODY,
    `<script type="module">\n${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
  return cached;
}

// The card's skeleton: sections stay hidden until the tool result fills them, commands first.
const BODY = `<main class="card">
  <header>
    <div class="title-row"><h1 id="title">Approval card</h1><span id="status" class="badge"></span></div>
    <p id="subtitle" class="muted">Waiting for the proposal…</p>
  </header>
  <section id="commands-section" class="commands" hidden>
    <h2>Commands it will run on this host</h2>
    <p id="commands-hint" class="muted"></p>
    <div id="commands"></div>
  </section>
  <section id="goal-section" hidden>
    <h2>Goal</h2>
    <p id="goal"></p>
    <p id="goal-description" class="prose clip muted"></p>
  </section>
  <section id="why-section" hidden>
    <h2>Proposed by</h2>
    <p id="proposer"></p>
    <h2>Reasoning</h2>
    <p id="reasoning" class="prose clip box"></p>
  </section>
  <section id="tree-section" hidden>
    <h2>Task tree</h2>
    <pre id="tree" class="tree"></pre>
  </section>
  <section id="agent-section" hidden>
    <h2>Agent it would create</h2>
    <dl id="agent"></dl>
  </section>
  <section id="decide" class="decide" hidden>
    <label for="reason">Reason — sent to the proposer; needed to reject</label>
    <textarea id="reason" rows="2" maxlength="2000"></textarea>
    <div class="buttons"><button id="approve" class="approve" type="button">Approve</button><button id="reject" class="reject" type="button">Reject</button></div>
  </section>
  <p id="outcome" class="outcome" role="status" hidden></p>
</main>`;
