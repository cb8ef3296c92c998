import { publicBaseUrl } from '../public-url.js';
import { randomBytes } from 'node:crypto';
import type { App } from '../app.js';
import { probeDecider, validateMessage } from '../commands/probes.js';
import { DomainError, invalidInput } from '../errors.js';
import { MAX_ACTIVE_PROBES, MAX_PROBE_HOURS, probeStream, type ProbeExpiryReason } from '../events/probes.js';
import { seal, unseal } from '../masterkey.js';
import { getAgent, getAgentByName, type AgentRow } from '../projections/principals.js';
import {
  activeProbeCount,
  activeProbesOf,
  getProbe,
  listProbes,
  sealedTokenOf,
  type ProbeRow,
} from '../projections/probes.js';
import { tokenHash } from '../tokens.js';
import { who } from './goals.js';
import { parseIsoTimestamp, pyRepr } from './probes/iso-time.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

export { validateMessage } from '../commands/probes.js';
export { fireProbe, type TriggerOutcome } from './probes/trigger.js';

/**
 * Probe commands (xylocopa's probe_* tools, reference §1.5), each one transaction, scoped to the
 * caller's tenant (xylocopa does not scope probe reads; reference §1.9 item 4). Refusals are
 * DomainErrors whose message is xylocopa's text, checked in xylocopa's order before anything is written.
 */
export interface CreatedProbe {
  probe: ProbeRow;
  token: string;
  url: string;
}
export type ProbeUpdate = { kind: 'updated'; probe: ProbeRow } | { kind: 'unchanged'; probe: ProbeRow };

/** An agent of the tenant, named by Colony's agent id ("3") or by its name. */
export function agentOf(app: App, tenant: number, ref: string): AgentRow | null {
  const agent = /^\d+$/.test(ref) ? getAgent(app.engine.db, Number(ref)) : getAgentByName(app.engine.db, tenant, ref);
  return agent && agent.ownerId === tenant ? agent : null;
}

/** Where the trigger URL points: see public-url.ts. */
export const triggerUrl = (token: string): string => `${publicBaseUrl()}/probes/${token}`;

/** The probe's trigger URL again (probe_get): the token is kept sealed under the master key. */
export function probeUrl(app: App, probe: ProbeRow): string {
  return triggerUrl(unseal(app.key, sealedTokenOf(app.engine.db, probe.probeId)!));
}

export function createProbe(
  app: App,
  by: Speaker,
  input: { agentId: string; message: string; expiresInHours: number },
  actor: CommandOptions,
): CreatedProbe {
  const ref = input.agentId.trim();
  if (ref === '') throw invalidInput('Error: agent_id is required.');
  if (!(input.expiresInHours > 0 && input.expiresInHours <= MAX_PROBE_HOURS))
    throw invalidInput(`Error: expires_in_hours must be in (0, ${MAX_PROBE_HOURS}].`);
  const invalid = validateMessage(input.message);
  if (invalid !== null) throw invalidInput(`Error: ${invalid}`);
  const token = randomBytes(16).toString('hex');
  const result = app.engine.transact(actor, (uow) => {
    const agent = agentOf(app, by.tenant, ref);
    if (!agent)
      throw new DomainError('ErrNotFound', `Error: agent ${input.agentId} not found.`, { agent_id: input.agentId });
    const active = activeProbeCount(app.engine.db, agent.agentId, uow.now);
    if (active >= MAX_ACTIVE_PROBES) {
      throw new DomainError(
        'ErrProbeLimit',
        `Error: agent ${String(agent.agentId).slice(0, 8)} already has ${active} active probes (limit ${MAX_ACTIVE_PROBES}). ` +
          'Use probe_update to expire some, or wait for them to time out.',
        { agent_id: agent.agentId, active },
      );
    }
    const n = uow.ids.next('probe');
    const probeId = freshProbeId(app);
    app.engine.handle(
      probeDecider,
      probeStream(n),
      {
        type: 'CreateProbe',
        probe: {
          probeId,
          n,
          agentId: agent.agentId,
          ownerId: by.tenant,
          tokenHash: tokenHash(token),
          sealedToken: seal(app.key, token),
          message: input.message.trim(),
          expiresAt: new Date(Date.parse(uow.now) + input.expiresInHours * 3_600_000).toISOString(),
          by: who(by),
        },
      },
      actor,
    );
    return probeId;
  });
  return { probe: getProbe(app.engine.db, result.value!)!, token, url: triggerUrl(token) };
}

function freshProbeId(app: App): string {
  for (;;) {
    const id = randomBytes(6).toString('hex');
    if (!getProbe(app.engine.db, id)) return id;
  }
}

/** A probe of the tenant, or xylocopa's "not found" text. */
export function probeOf(app: App, tenant: number, probeId: string): ProbeRow {
  const probe = getProbe(app.engine.db, probeId);
  if (!probe || probe.ownerId !== tenant)
    throw new DomainError('ErrNotFound', `No probe found matching: ${probeId}`, { probe_id: probeId });
  return probe;
}

/** probe_list: the tenant's probes (of one agent when given; an unknown agent simply has none), newest first, at most 50. */
export function tenantProbes(app: App, tenant: number, f: { agentId: string; includeFired: boolean }): ProbeRow[] {
  let agentId: number | null = null;
  if (f.agentId !== '') {
    const agent = agentOf(app, tenant, f.agentId);
    if (!agent) return [];
    agentId = agent.agentId;
  }
  return listProbes(app.engine.db, {
    ownerId: tenant,
    agentId,
    includeFired: f.includeFired,
    now: app.engine.clock().toISOString(),
    limit: 50,
  });
}

/**
 * probe_update(expires_at): xylocopa's checks in its order. A time that is not in the future cancels the
 * probe. Unlike xylocopa, the new time may be at most 168 h ahead, as at creation — otherwise an update
 * would make a single-fire credential live forever (reference §1.9 item 4 calls the missing cap a gap).
 */
export function updateProbe(
  app: App,
  by: Speaker,
  probeId: string,
  expiresAt: string,
  actor: CommandOptions,
): ProbeUpdate {
  const result = app.engine.transact(actor, (uow) => {
    const probe = probeOf(app, by.tenant, probeId);
    if (probe.firedAt !== null)
      throw new DomainError('ErrProbeFired', `Probe ${probe.probeId} already fired — cannot update.`, {
        probe_id: probe.probeId,
      });
    if (expiresAt === '') return 'unchanged' as const;
    const at = parseIsoTimestamp(expiresAt);
    if (!at)
      throw invalidInput(`Error: invalid expires_at ISO timestamp: ${pyRepr(expiresAt)}`, { field: 'expires_at' });
    if (at.getTime() > Date.parse(uow.now) + MAX_PROBE_HOURS * 3_600_000) {
      throw invalidInput(`Error: expires_at must be at most ${MAX_PROBE_HOURS} hours from now.`, {
        field: 'expires_at',
      });
    }
    app.engine.handle(
      probeDecider,
      probeStream(probe.n),
      { type: 'UpdateProbe', expiresAt: at.toISOString(), by: who(by) },
      actor,
    );
    return 'updated' as const;
  });
  return { kind: result.value ?? 'updated', probe: getProbe(app.engine.db, probeId)! };
}

/** Expires every active probe of the agent (it was stopped, or its run failed), inside the caller's command. */
export function expireAgentProbes(app: App, agentId: number, reason: ProbeExpiryReason, actor: CommandOptions): number {
  return (
    app.engine.transact(actor, (uow) => {
      const probes = activeProbesOf(app.engine.db, agentId, uow.now);
      for (const p of probes) app.engine.handle(probeDecider, probeStream(p.n), { type: 'ExpireProbe', reason }, actor);
      return probes.length;
    }).value ?? 0
  );
}
