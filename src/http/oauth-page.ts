import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { PendingRequest } from './oauth-requests.js';
import { redirectHost, redirectSource, shownClientName } from './oauth-redirects.js';

/**
 * The authorization page. Everything a client supplied (its name, id, redirect URI) is hostile text:
 * HTML-escaped wherever it appears (the name's hidden characters made visible first), and the page runs
 * under a CSP that allows only its own nonce'd script and style, fetches only from this origin, posts
 * forms only here or to the request's redirect (the 303 after approval), and cannot be framed (no
 * clickjacking of the Approve button).
 */
export const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export type Viewer =
  | null
  | { kind: 'owner'; name: string; csrf: string; agents: { agentId: number; name: string }[] }
  | { kind: 'agent'; name: string };

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}
code,.code{font-family:ui-monospace,monospace}.code{font-size:2rem;letter-spacing:.15em;padding:.3rem .8rem;border:2px solid #888;border-radius:6px}
dt{font-weight:600}dd{margin:0 0 .6rem 0;overflow-wrap:anywhere}button{font-size:1rem;padding:.4rem 1.2rem;margin-right:.6rem}.note{color:#555}`;

const POLL = `(()=>{const id=document.querySelector('main').dataset.request;const say=document.getElementById('status');
async function poll(){try{const r=await fetch('/oauth/authorize/status?request='+encodeURIComponent(id),{cache:'no-store'});const b=await r.json();
if(b.redirect){say.textContent=b.status==='approved'?'Approved: returning to the application…':'Denied: returning to the application…';location.assign(b.redirect);return}
if(b.status==='expired'){say.textContent='This request has expired: start again from the application.';return}}catch(e){}setTimeout(poll,1500)}
setTimeout(poll,1500)})();`;

function send(
  res: Response,
  status: number,
  title: string,
  body: string,
  formTarget: string | null,
  script = '',
): void {
  const nonce = randomBytes(16).toString('base64');
  const formAction = formTarget ? `'self' ${formTarget}` : "'self'";
  res.status(status).set({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy':
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'none'; ` +
      `form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  })
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${esc(title)}</title><style nonce="${nonce}">${STYLE}</style></head><body>${body}${script ? `<script nonce="${nonce}">${script}</script>` : ''}</body></html>`);
}

export function sendErrorPage(res: Response, status: number, message: string): void {
  send(
    res,
    status,
    'Colony: authorization refused',
    `<main><h1>This authorization request cannot go on</h1><p>${esc(message)}</p>
<p class="note">Nothing was granted, and the application was not sent back anything. Start again from the application.</p></main>`,
    null,
  );
}

export function sendConsentPage(res: Response, request: PendingRequest, viewer: Viewer): void {
  const { client } = request;
  // Escaped for HTML below; its hidden characters (bidi controls, zero-width ones) shown as \uXXXX first.
  const name = shownClientName(client.clientName).trim() || '(an application that gave no name)';
  const origin =
    client.kind === 'cimd'
      ? `described by its metadata document at <code>${esc(new URL(client.clientId).host)}</code>`
      : 'registered itself with this server';
  const body = `<main data-request="${esc(request.id)}"><h1>Authorize “${esc(name)}”?</h1>
<p>An application asks to call Colony's MCP tools — on your behalf or as one of your agents.</p>
<dl><dt>Application</dt><dd>${esc(name)} (${origin})</dd>
<dt>Client ID</dt><dd><code>${esc(client.clientId)}</code></dd>
<dt>Sends you back to</dt><dd><code>${esc(redirectHost(request.redirectUri))}</code></dd>
<dt>Access</dt><dd><code>${esc(request.scopes.join(' '))}</code>: every MCP tool of the identity you choose, nothing else (no console, no REST); 1-hour tokens, renewed until you revoke them</dd>
<dt>Code</dt><dd><span class="code">${esc(request.userCode)}</span></dd></dl>
${approvePart(request, viewer)}
<p id="status" class="note">Waiting for the owner's decision…</p></main>`;
  send(res, 200, `Colony: authorize ${name}`, body, redirectSource(request.redirectUri), POLL);
}

function approvePart(request: PendingRequest, viewer: Viewer): string {
  const code = esc(request.userCode);
  const cli = `<p>On the machine Colony runs on, check that the code above matches, then run<br>
<code>colony oauth approve ${code}</code> (as you), or <code>colony oauth approve ${code} --as agent:NAME</code> (as one agent, with its tools only)<br>
or <code>colony oauth deny ${code}</code>. This page goes on by itself.</p>`;
  // Arriving from the application is a cross-site navigation, so the console's SameSite=Strict cookie is not
  // sent and no buttons can show: point to the console instead. A plain relative link, opened in a new tab,
  // because this page must stay open: its poll is what sends the browser back to the application.
  const elsewhere = `<p><b>Approve it in the Colony console under <a href="/oauth" target="_blank" rel="noopener">OAuth apps</a>, or run
<code>colony oauth approve ${code}</code></b>. Keep this page open: it takes you back to the application once you decide.</p>`;
  if (viewer?.kind === 'agent') {
    return `<p>This browser is signed in to the console as agent <b>${esc(viewer.name)}</b>: only the owner approves applications.</p>${elsewhere}${cli}`;
  }
  if (viewer?.kind !== 'owner') return `${elsewhere}${cli}`;
  const options = [
    `<option value="owner">you (${esc(viewer.name)}): every tool</option>`,
    ...viewer.agents.map((a) => `<option value="agent:${a.agentId}">agent ${esc(a.name)}: its tools only</option>`),
  ].join('');
  return `<form method="post" action="/oauth/authorize/decision">
<input type="hidden" name="request" value="${esc(request.id)}"><input type="hidden" name="csrf" value="${esc(viewer.csrf)}">
<p><label>Act as <select name="as">${options}</select></label></p>
<p><button type="submit" name="decision" value="approve">Approve</button><button type="submit" name="decision" value="deny">Deny</button></p></form>
<details><summary>Or from a terminal</summary>${cli}</details>`;
}
