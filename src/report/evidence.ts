import { html, int, time, type Html } from './markup.js';

/**
 * What ties a printed report to its evidence: the goal bundle it was made with — its file name
 * and sha256, the signed checkpoint its events are proven against, and the signing key's fingerprint — so
 * a reader can match this page to a bundle and check the bundle offline.
 */
export interface ReportEvidence {
  file: string;
  sha256: string;
  events: number;
  treeSize: number;
  rootHash: string;
  signedAt: string;
  keyId: string;
}

export function evidenceSection(e: ReportEvidence | undefined): Html | null {
  if (!e) return null;
  return html`<section id="evidence"><h2>Evidence</h2>
<p>This report goes with the goal bundle <code>${e.file}</code> (sha256 <code class="hash" data-bundle-sha256="${e.sha256}">${e.sha256}</code>):
${int(e.events)} events, each proven against the checkpoint below.</p>
<table class="evidence"><tbody>
<tr><th>Checkpoint</th><td data-tree-size="${e.treeSize}">${int(e.treeSize)} events of the log</td></tr>
<tr><th>Merkle root</th><td><code class="hash" data-root="${e.rootHash}">${e.rootHash}</code></td></tr>
<tr><th>Signed at</th><td>${time(e.signedAt)}</td></tr>
<tr><th>Signing key</th><td><code data-key-id="${e.keyId}">${e.keyId}</code></td></tr>
</tbody></table>
<p class="dim">Check it offline: <code>colony verify-bundle ${e.file} --key ${e.keyId}</code>, or without Colony's code: <code>node tools/verify-bundle.mjs ${e.file} --key ${e.keyId}</code>.</p>
</section>`;
}
