import * as z from 'zod';
import { createProbe, probeWithUrl, tenantProbes, updateProbe } from '../../actions/probes.js';
import { DEFAULT_PROBE_HOURS, MAX_PROBE_HOURS } from '../../events/probes.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';
import { answer } from './xylocopa.js';
import { Created, createdText, Got, gotText, Listed, listedText, Updated, updatedText, view } from './probe-text.js';
import { speaker } from '../../events/principals.js';

/**
 * xylocopa's probe tools: probe_create, probe_list, probe_get, probe_update, with its texts
 * (probe-text.ts). Everything is scoped to the caller's tenant — an owner's own, an agent's owner's —
 * unlike xylocopa, whose probe reads were not scoped. Within it, an agent probes only itself and the
 * agents down its spawn lineage (ErrProbeForbidden): it creates, updates and sees the trigger URL of
 * their probes only; the owner probes any agent of the team. A fired probe names its creator.
 * A probe is cancelled with probe_update(expires_at=<now or past>): no agent tool may be named for it.
 */
const common = { surface: 'agent', module: 'probes' } as const;
const tenantOf = (ctx: ToolContext): number => speaker(ctx.caller).tenant;
const now = (ctx: ToolContext): string => ctx.app.engine.clock().toISOString();
const agentRef = z.string().max(200);
const probeId = z.string().max(200).describe('The 12-hex probe id');

const create = defineTool({
  ...common,
  name: 'probe_create',
  title: 'Create a probe',
  trust: 'write',
  description: `Creates a one-shot wake-up webhook for an agent (agent_id: its id, e.g. "3", or its name): an agent may probe only itself and the agents it spawned, down its spawn lineage (else ErrProbeForbidden); the owner any agent of the team. Anyone holding the returned trigger URL may POST to it once (no auth, body ignored): the message then reaches the agent as a DM wrapped in a "🔔 Probe … fired" envelope that names you as its author, and wakes it; later POSTs get 410 Gone. Expires after expires_in_hours (1–${MAX_PROBE_HOURS}, default ${DEFAULT_PROBE_HOURS}), or earlier when the agent is stopped or a run of it fails. The message (≤ 4000 characters) may not contain control characters (newline and tab are fine) or the envelope's header or footer. At most 10 active probes per agent. Refusals are answered as text starting with "Error: ".`,
  input: z.strictObject({
    agent_id: agentRef.describe('The agent to wake: its id ("3") or its name'),
    message: z.string().max(100_000).describe('What the agent is told when the probe fires (≤ 4000 characters)'),
    expires_in_hours: z
      .number()
      .int()
      .default(DEFAULT_PROBE_HOURS)
      .describe(`Hours until it expires, in (0, ${MAX_PROBE_HOURS}]`),
  }),
  output: Created,
  handler: (ctx, a) =>
    answer(() => {
      const c = createProbe(
        ctx.app,
        speaker(ctx.caller),
        { agentId: a.agent_id, message: a.message, expiresInHours: a.expires_in_hours },
        ctx.command,
      );
      return { status: 'ok' as const, probe: view(c.probe, now(ctx), c.url), expires_in_hours: a.expires_in_hours };
    }),
  text: createdText,
});

const list = defineTool({
  ...common,
  name: 'probe_list',
  title: 'List probes',
  trust: 'read',
  description:
    'Lists your team\'s probes, newest first, at most 50: only active ones (not fired, not expired) unless include_fired is true, then fired and expired ones too. agent_id (an id or a name) narrows it to one agent. Each row: probe id, agent, state (active until / FIRED at / EXPIRED at) and the start of the message. Trigger URLs are shown by probe_get only. Answers "No probes found." when there are none.',
  input: z.strictObject({
    agent_id: agentRef.default('').describe('Only this agent\'s probes (its id or name); "" for all'),
    include_fired: z.boolean().default(false).describe('Also show fired and expired probes'),
  }),
  output: Listed,
  handler(ctx, a) {
    const at = now(ctx);
    const probes = tenantProbes(ctx.app, tenantOf(ctx), {
      agentId: a.agent_id.trim(),
      includeFired: a.include_fired,
    }).map((p) => view(p, at));
    return { status: 'ok' as const, count: probes.length, probes };
  },
  text: listedText,
});

const get = defineTool({
  ...common,
  name: 'probe_get',
  title: 'Show a probe',
  trust: 'read',
  description:
    'Shows one of your team\'s probes: its agent, when it was created, expires and fired, its trigger URL (which is its credential: share it only with what should fire it) and its message. Answers "No probe found matching: ID" when there is none; an agent sees only probes of itself and the agents it spawned (else ErrProbeForbidden).',
  input: z.strictObject({ probe_id: probeId }),
  output: Got,
  handler: (ctx, a) =>
    answer(() => {
      const { probe, url } = probeWithUrl(ctx.app, speaker(ctx.caller), a.probe_id);
      return { status: 'ok' as const, probe: view(probe, now(ctx), url) };
    }),
  text: gotText,
});

const update = defineTool({
  ...common,
  name: 'probe_update',
  title: 'Change when a probe expires',
  trust: 'write',
  description: `Sets a new expiry (ISO 8601; without an offset it is UTC) for an active probe of your team (an agent: of itself or an agent it spawned, else ErrProbeForbidden). A time now or in the past expires it at once — that is how a probe is cancelled. The new time may be at most ${MAX_PROBE_HOURS} hours ahead. A fired probe cannot be updated ("Probe ID already fired — cannot update."), nor an expired one. An empty expires_at changes nothing.`,
  input: z.strictObject({
    probe_id: probeId,
    expires_at: z.string().max(200).default('').describe('The new expiry, ISO 8601, e.g. 2026-03-01T12:00:00Z'),
  }),
  output: Updated,
  handler: (ctx, a) =>
    answer(() => {
      const r = updateProbe(ctx.app, speaker(ctx.caller), a.probe_id, a.expires_at, ctx.command);
      return {
        status: 'ok' as const,
        probe_id: r.probe.probeId,
        updated: r.kind === 'updated',
        probe: view(r.probe, now(ctx)),
      };
    }),
  text: updatedText,
});

export const probeTools: readonly AnyTool[] = [create, list, get, update];
