import * as z from 'zod';
import { outcome, refusedText } from './xylocopa.js';
import { webappUrl } from '../../actions/webapps.js';
import type { WebappRow } from '../../projections/webapps.js';

/**
 * The shapes and texts of xylocopa's web app tools. The text is rendered from the
 * structuredContent, so the two never disagree. As with every xylocopa tool here, a refusal is an
 * ordinary result whose text is xylocopa's (`Error: …`), with structuredContent
 * `{status: 'error', error_code, message}` (see probe-text.ts).
 */
export const WebappView = z.object({
  app_id: z.string().describe("The random id in the app's URL"),
  project: z.string(),
  kind: z.enum(['static', 'port', 'url']),
  target: z.string().describe('static: the path relative to the project; port: the port; url: the link'),
  title: z.string(),
  description: z.string(),
  url: z.string().describe('Where it opens: /apps/<app_id>/ on this Colony (static, port), or the external link (url)'),
  agent_id: z.string().describe('The agent that presented it last, as a string'),
  message_id: z.number().int().describe('Its latest card message'),
  created_at: z.string(),
  last_presented_at: z.string(),
  retired: z
    .boolean()
    .describe('A port app whose presenting agent was stopped: no longer proxied until presented again'),
  retired_at: z.string().nullable(),
});
type View = z.infer<typeof WebappView>;

export const view = (w: WebappRow): View => ({
  app_id: w.appId,
  project: w.projectName,
  kind: w.kind,
  target: w.target,
  title: w.title,
  description: w.description,
  url: webappUrl(w),
  agent_id: String(w.agentId),
  message_id: w.messageId,
  created_at: w.createdAt,
  last_presented_at: w.lastPresentedAt,
  retired: w.retiredAt !== null,
  retired_at: w.retiredAt,
});

export const Presented = z.object({
  ...outcome,
  outcome: z
    .enum(['presented', 'represented'])
    .optional()
    .describe('presented: a new registration; represented: the same project, kind and target again'),
  message_id: z.number().int().optional().describe('The card message'),
  posted_in: z
    .object({
      channel_id: z.number().int(),
      channel: z.string(),
      goal: z
        .boolean()
        .describe("True: the goal channel of the agent's current run; false: a direct message to its owner"),
    })
    .optional(),
  app: WebappView.optional(),
});
export const Listed = z.object({
  ...outcome,
  project: z.string().nullable().describe('The project listed, or null for all of them'),
  count: z.number().int(),
  apps: z.array(WebappView),
});

function hint(w: View): string {
  switch (w.kind) {
    case 'static':
      return `\n- Served at: \`${w.url}\` — a sandboxed page: its scripts run, but it makes no network requests; files next to it are served too.`;
    case 'port':
      return (
        `\n- Stable proxy prefix: \`${w.url}\`` +
        "\n- Prefix is stripped when proxying — root-served apps (TensorBoard, http.server) work as-is; vite dev needs base:'./'." +
        '\n- Proxying ends when the presenting agent is stopped.'
      );
    case 'url':
      return '';
    default: {
      const never: never = w.kind;
      return never;
    }
  }
}

export function presentedText(r: z.infer<typeof Presented>): string {
  const w = r.app;
  if (!w || !r.posted_in) return refusedText(r) ?? '';
  const where = r.posted_in.goal ? `#${r.posted_in.channel} (your goal's channel)` : 'a direct message to your owner';
  return [
    `Web app card posted to chat (message ${r.message_id}, kind=${w.kind}).`,
    `- Registered: ${w.project} / ${w.kind} / ${w.target}`,
    `- Posted in: ${where}`,
    `- The user can tap the card to open it.${hint(w)}`,
  ].join('\n');
}

/** `YYYY-MM-DD HH:MM` in UTC. */
const minute = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;

export function listedText(r: z.infer<typeof Listed>): string {
  const refused = refusedText(r);
  if (refused !== null) return refused;
  if (r.apps.length === 0)
    return `No web apps registered for ${r.project === null ? 'any project' : `project \`${r.project}\``}. Present one with webapp_present.`;
  const rows = r.apps.map((w) => {
    const lines = [
      `- **${w.title || w.target}** — kind=${w.kind}, target=\`${w.target}\`${r.project === null ? `, project=${w.project}` : ''}` +
        `${w.retired ? ' [retired: its agent was stopped — present it again to serve it]' : ''}`,
    ];
    if (w.description) lines.push(`  ${w.description}`);
    lines.push(`  url: \`${w.url}\``, `  last presented: ${minute(w.last_presented_at)}`);
    return lines.join('\n');
  });
  return [`Found ${r.count} web app(s)${r.project === null ? '' : ` in \`${r.project}\``}:\n`, ...rows].join('\n');
}
