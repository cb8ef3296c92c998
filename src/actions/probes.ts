import { publicBaseUrl } from '../public-url.js';
import { randomBytes } from 'node:crypto';
import type { App } from '../app.js';
import { forbidden, mayProbe, probeDecider, type ProbeReach } from '../commands/probes.js';
import { DomainError } from '../errors.js';
import { probeStream, type ProbeExpiryReason } from '../events/probes.js';
import { seal, unseal } from '../masterkey.js';
import { descendantsOf, getAgent, getAgentByName, type AgentRow } from '../projections/principal-queries.js';
import {
  activeProbeCount,
  activeProbesOf,
  getProbe,
  listProbes,
  sealedTokenOf,
  type ProbeRow,
} from '../projections/probes.js';
import { tokenHash } from '../tokens.js';
import { agentIdOf, who } from './goals.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { checkProbeRoom } from './breakers/wake-cap.js';

export { validateMessage } from '../commands/probes.js';
export { fireProbe, type TriggerOutcome } from './probes/trigger.js';

/**
 * Probe commands (xylocopa's probe_* tools), each one transaction, scoped to the caller's tenant (xylocopa
 * does not scope probe reads). The action reads the facts and routes; the probe decider refuses, with
 * xylocopa's texts in its order, before anything is written.
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

/** The agents `by` may probe (commands/probes.ts, ProbeReach): null for the owner, else itself and its spawn lineage. */
export function reachOf(app: App, by: Speaker): ProbeReach {
  const self = agentIdOf(by);
  return self === null ? null : [self, ...descendantsOf(app.engine.db, self)];
}

/** Where the trigger URL points: see public-url.ts. */
export const triggerUrl = (token: string): string => `${publicBaseUrl()}/probes/${token}`;

/** The probe's trigger URL again (probe_get): the token is kept sealed under the master key. */
export function probeUrl(app: App, probe: ProbeRow): string {
  return triggerUrl(unseal(app.key, sealedTokenOf(app.engine.db, probe.probeId)!));
}

/** probe_create: a new probe and its trigger token (stored as its hash, and sealed so probe_get can show the URL again). */
export function createProbe(
  app: App,
  by: Speaker,
  input: { agentId: string; message: string; expiresInHours: number },
  actor: CommandOptions,
): CreatedProbe {
  const token = randomBytes(16).toString('hex');
  const result = app.engine.transact(actor, (uow) => {
    const agent = agentOf(app, by.tenant, input.agentId.trim());
    const activeProbes = agent ? activeProbeCount(app.engine.db, agent.agentId, uow.now) : 0;
    const n = uow.ids.next('probe');
    const probeId = freshProbeId(app);
    app.engine.handle(
      probeDecider,
      probeStream(n),
      {
        type: 'RegisterProbe',
        request: input,
        agent: agent && { agentId: agent.agentId, activeProbes },
        reach: reachOf(app, by),
        probe: {
          probeId,
          n,
          ownerId: by.tenant,
          tokenHash: tokenHash(token),
          sealedToken: seal(app.key, token),
          by: who(by),
        },
      },
      actor,
    );
    // After the decider's own checks (who may probe whom), so the refusal tells nothing to a caller it refused.
    if (agent) checkProbeRoom(app.engine.db, agent, activeProbes, uow.now);
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

/**
 * probe_get: a probe of the tenant with its trigger URL — which fires it, so only for a caller that may
 * probe its agent (ErrProbeForbidden otherwise; probe_list still lists it, without the URL).
 */
export function probeWithUrl(app: App, by: Speaker, probeId: string): { probe: ProbeRow; url: string } {
  const probe = probeOf(app, by.tenant, probeId);
  if (!mayProbe(reachOf(app, by), probe.agentId)) throw forbidden(by, probe.agentId);
  return { probe, url: probeUrl(app, probe) };
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

/** probe_update(expires_at): the probe decider checks the time ('' changes nothing; a past time cancels). */
export function updateProbe(
  app: App,
  by: Speaker,
  probeId: string,
  expiresAt: string,
  actor: CommandOptions,
): ProbeUpdate {
  const result = app.engine.transact(actor, () => {
    const probe = probeOf(app, by.tenant, probeId);
    const { events } = app.engine.handle(
      probeDecider,
      probeStream(probe.n),
      { type: 'UpdateProbe', expiresAt, by: who(by), reach: reachOf(app, by) },
      actor,
    );
    return events.length > 0 ? ('updated' as const) : ('unchanged' as const);
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
