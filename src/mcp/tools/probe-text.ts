import * as z from 'zod';
import { outcome, refusedText } from './xylocopa.js';
import type { ProbeRow } from '../../projections/probes.js';

/**
 * The shapes and texts of xylocopa's probe tools. The text is rendered from the
 * structuredContent, so the two never disagree. Like every xylocopa tool, a refusal is an ordinary
 * result whose text is xylocopa's (`Error: …`, `No probe found matching: …`), never isError; its
 * structuredContent is `{status: 'error', error_code, message}`, which the audit records as an error.
 */
export const ProbeView = z.object({
  probe_id: z.string(),
  agent_id: z.string().describe("Colony's agent id, as a string"),
  state: z.enum(['active', 'fired', 'expired']),
  message: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  fired_at: z.string().nullable(),
  expired_reason: z
    .string()
    .nullable()
    .describe('Why it expired before its time (manual, agent_stopped, agent_error), or null'),
  trigger_url: z.string().optional().describe('POST here (no auth, body ignored) to fire it once'),
});
export type ProbeViewT = z.infer<typeof ProbeView>;

export const Created = z.object({
  ...outcome,
  probe: ProbeView.optional(),
  expires_in_hours: z.number().int().optional(),
});
export const Listed = z.object({ ...outcome, count: z.number().int(), probes: z.array(ProbeView) });
export const Got = z.object({ ...outcome, probe: ProbeView.optional() });
export const Updated = z.object({
  ...outcome,
  probe_id: z.string().optional(),
  updated: z.boolean().optional(),
  probe: ProbeView.optional(),
});

export function view(p: ProbeRow, now: string, triggerUrl?: string): ProbeViewT {
  const state = p.firedAt !== null ? 'fired' : Date.parse(p.expiresAt) <= Date.parse(now) ? 'expired' : 'active';
  return {
    probe_id: p.probeId,
    agent_id: String(p.agentId),
    state,
    message: p.message,
    created_at: p.createdAt,
    expires_at: p.expiresAt,
    fired_at: p.firedAt,
    expired_reason: p.expiredReason ?? (p.burnedReason ? `burned: ${p.burnedReason}` : null),
    ...(triggerUrl ? { trigger_url: triggerUrl } : {}),
  };
}

const ts19 = (iso: string | null): string => (iso ?? '').slice(0, 19);
/** The first n characters as Python slices them (code points). */
const head = (text: string, n: number): string => Array.from(text).slice(0, n).join('');

export function createdText(r: z.infer<typeof Created>): string {
  const p = r.probe;
  if (!p) return refusedText(r) ?? '';
  return [
    `Probe **${p.probe_id}** created for agent \`${head(p.agent_id, 8)}\`.`,
    '',
    `- Trigger URL: \`${p.trigger_url}\``,
    `- Expires: ${p.expires_at} (in ${r.expires_in_hours}h)`,
    '- Single-fire: subsequent POSTs return 410 Gone.',
    '',
    'To trigger from a script:',
    `  curl -X POST '${p.trigger_url}'`,
    '',
    'Body is ignored by design (no prompt injection surface).',
  ].join('\n');
}

function stateLabel(p: ProbeViewT): string {
  if (p.state === 'fired') return `FIRED at ${ts19(p.fired_at)}`;
  return p.state === 'expired' ? `EXPIRED at ${ts19(p.expires_at)}` : `active until ${ts19(p.expires_at)}`;
}

export function listedText(r: z.infer<typeof Listed>): string {
  if (r.probes.length === 0) return 'No probes found.';
  const rows = r.probes.map((p) => {
    const more = Array.from(p.message).length > 80 ? '...' : '';
    return `- **${p.probe_id}** agent=\`${head(p.agent_id, 8)}\` [${stateLabel(p)}]\n  message: ${head(p.message, 80)}${more}`;
  });
  return [`Found ${r.count} probe(s):\n`, ...rows].join('\n');
}

export function gotText(r: z.infer<typeof Got>): string {
  const p = r.probe;
  if (!p) return refusedText(r) ?? '';
  return [
    `# Probe: ${p.probe_id}`,
    `- agent_id: \`${p.agent_id}\``,
    `- created_at: ${p.created_at}`,
    `- expires_at: ${p.expires_at}`,
    `- fired_at: ${p.fired_at ?? '(not fired)'}`,
    `- trigger URL: \`${p.trigger_url}\``,
    '',
    '## Message',
    p.message,
  ].join('\n');
}

export function updatedText(r: z.infer<typeof Updated>): string {
  const refused = refusedText(r);
  if (refused !== null) return refused;
  return r.updated
    ? `Probe ${r.probe_id} updated: expires_at=${r.probe!.expires_at}`
    : `No fields to update for probe ${r.probe_id}.`;
}
