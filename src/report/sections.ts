import type { ReportData, ReportRun } from './data.js';
import type { ReportArtifact } from './artifacts.js';
import type { CostRow } from './costs.js';
import { cents, duration, html, int, statusClass, time, type Html } from './markup.js';
import type { TimelineEntry } from './timeline.js';

/** The report's lower sections: runs, the three cost breakdowns, the timeline and the artifacts. */
export function runsSection(runs: readonly ReportRun[]): Html {
  if (runs.length === 0)
    return html`<section id="runs"><h2>Runs</h2><p class="empty">No agent runs for this goal.</p></section>`;
  const rows = runs.map(
    (r) =>
      html`<tr class="run" data-run-id="${r.id}" data-agent="${r.agent}" data-duration-ms="${r.durationMs ?? 0}" data-tokens-out="${r.tokensOut}">
<td class="num">${r.id}</td><td>${r.agent}</td><td>${r.source}</td><td>${r.taskId === null ? '—' : `#${r.taskId}`}</td>
<td><span class="badge ${statusClass(r.status)}">${r.status}</span>${r.limitHit ? html` <span class="badge ${statusClass('failed')}">${r.limitHit} limit</span>` : null}${r.reason ? html`<div class="dim">${r.reason}</div>` : null}${r.sandbox ? html`<div class="dim sandbox">${r.sandbox}</div>` : null}</td>
<td>${time(r.startedAt)}</td><td class="num">${duration(r.durationMs)}</td><td class="num">${int(r.tokensIn)}</td><td class="num">${int(r.tokensOut)}</td>
<td class="num">${cents(r.costCents)}</td></tr>`,
  );
  return html`<section id="runs"><h2>Runs</h2>
<table><thead><tr><th class="num">Run</th><th>Agent</th><th>Source</th><th>Task</th><th>Status</th><th>Started</th><th class="num">Duration</th>
<th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function costTable(kind: string, title: string, first: string, count: string, rows: readonly CostRow[]): Html {
  const total = rows.reduce(
    (t, r) => ({ tokens: t.tokens + r.tokens, cents: t.cents + r.cents, count: t.count + r.count }),
    { tokens: 0, cents: 0, count: 0 },
  );
  const body =
    rows.length === 0
      ? html`<tr><td colspan="4" class="empty">Nothing spent yet.</td></tr>`
      : rows.map(
          (r) =>
            html`<tr class="cost" data-cost="${kind}" data-key="${r.label}" data-tokens="${r.tokens}" data-cents="${r.cents}">
<td>${r.label}</td><td class="num">${int(r.tokens)}</td><td class="num">${cents(r.cents)}</td><td class="num">${r.count}</td></tr>`,
        );
  return html`<h3>${title}</h3><table data-costs="${kind}"><thead><tr><th>${first}</th><th class="num">Tokens</th><th class="num">Cost</th><th class="num">${count}</th></tr></thead>
<tbody>${body}</tbody><tfoot><tr><th>Total</th><th class="num">${int(total.tokens)}</th><th class="num">${cents(total.cents)}</th><th class="num">${total.count}</th></tr></tfoot></table>`;
}

export function costsSection(costs: ReportData['costs']): Html {
  return html`<section id="costs"><h2>Costs</h2>
${costTable('billing_code', 'By billing code', 'Billing code', 'Tasks', costs.byBillingCode)}
${costTable('agent', 'By agent (usage reports and runs)', 'Agent', 'Records', costs.byAgent)}
${costTable('level', "By tree level (each task's own spend)", 'Level', 'Tasks', costs.byLevel)}
</section>`;
}

export function timelineSection(timeline: readonly TimelineEntry[]): Html {
  const rows = timeline.map(
    (e) =>
      html`<tr class="event" data-position="${e.position}" data-type="${e.type}">
<td class="num">${e.position}</td><td class="mono">${time(e.at)}</td><td>${e.type}</td><td class="dim">${e.actor}</td><td class="mono dim">${e.stream}</td><td>${e.summary}</td></tr>`,
  );
  return html`<section id="timeline"><h2>Timeline</h2>
<p class="dim">Every event of the goal, its tasks, its proposals, its channel and its runs, in log order (${timeline.length} events).</p>
<table><thead><tr><th class="num">#</th><th>Time</th><th>Event</th><th>Actor</th><th>Stream</th><th>Summary</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

const ARTIFACT_MAX = 8 * 1024;
export function artifactsSection(artifacts: readonly ReportArtifact[]): Html {
  const items = artifacts.map((a) => {
    const chars = Array.from(a.body);
    const body =
      chars.length > ARTIFACT_MAX
        ? `${chars.slice(0, ARTIFACT_MAX).join('')}\n… (${chars.length - ARTIFACT_MAX} more characters)`
        : a.body;
    const tasks = a.taskIds.length > 0 ? ` · artifact of task ${a.taskIds.map((id) => `#${id}`).join(', ')}` : '';
    return html`<div class="artifact" data-message-id="${a.messageId}"><b>${a.subject ?? `Message #${a.messageId}`}</b>
<div class="dim">by ${a.from} in #${a.channel} at ${time(a.at)}${tasks}</div><pre>${body}</pre></div>`;
  });
  return html`<section id="artifacts"><h2>Artifacts</h2>${items.length > 0 ? items : html`<p class="empty">No artifacts.</p>`}</section>`;
}
