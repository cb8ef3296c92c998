import { DomainError, invalidInput } from '../errors.js';
import {
  MAX_ACTIVE_PROBES,
  MAX_PROBE_HOURS,
  PROBE_ID,
  type ProbeBurnReason,
  type ProbeCreated,
  type ProbeEvent,
  type ProbeExpiryReason,
} from '../events/probes.js';
import type { Decider } from '../engine/decider.js';
import { type By } from '../events/principals.js';
import { parseIsoTimestamp, pyRepr } from './iso-time.js';
import { validateMessage } from './probe-message.js';

export { envelopeTime, probeEnvelope, validateMessage } from './probe-message.js';

/**
 * The probe decider (`probe-<n>` streams): created once, then fired, burned or expired at most once —
 * a probe is single-fire, and an expired one stays expired (unlike xylocopa, where a later probe_update
 * could revive it: expiry here is a fact, as stopping the agent was). Whether the expiry time has passed
 * is decided against the command's time (`ctx.now`), never a clock. The probe tools' refusals are
 * xylocopa's texts, checked in its order.
 */
/** A probe as recorded: only what every probe must satisfy is checked. */
export type CreateProbe = { type: 'CreateProbe'; probe: ProbeCreated['data'] };
/**
 * Which agents a caller may probe: null for the owner (every agent of its team); for an agent, itself and
 * every agent down its spawn lineage (the ones it spawned, and theirs: it supervises them all, as it may
 * read their runs). A probe's message wakes its agent with the creator's words, so an agent that could
 * probe a peer or its own parent could put text of its choosing before any agent of the team.
 */
export type ProbeReach = readonly number[] | null;
export const mayProbe = (reach: ProbeReach, agentId: number): boolean => reach === null || reach.includes(agentId);

/**
 * probe_create: the arguments as the caller gave them, and the facts the action read — the tenant's agent
 * `agent_id` names (null: none) with its active probes now, the caller's reach, and the new probe's id
 * and sealed token.
 */
export type RegisterProbe = {
  type: 'RegisterProbe';
  request: { agentId: string; expiresInHours: number; message: string };
  agent: { agentId: number; activeProbes: number } | null;
  reach: ProbeReach;
  probe: Pick<ProbeCreated['data'], 'probeId' | 'n' | 'ownerId' | 'tokenHash' | 'sealedToken' | 'by'>;
};
/**
 * probe_update: `expiresAt` as the caller wrote it (read as Python's fromisoformat does); '' changes
 * nothing. `reach`: the caller's, as for probe_create — moving a probe's expiry is probing its agent too.
 */
export type UpdateProbe = { type: 'UpdateProbe'; expiresAt: string; by: By; reach: ProbeReach };
/**
 * Its trigger URL was called; `agentExists`: the probe's agent is still there. Refused once fired or
 * expired; a probe whose agent is gone or whose message no longer validates is burned (used up without
 * delivery). Nothing decided means "deliver it": the action posts the envelope and sends FireProbe.
 */
export type TriggerProbe = { type: 'TriggerProbe'; agentExists: boolean };
export type FireProbe = { type: 'FireProbe'; messageId: number };
export type BurnProbe = { type: 'BurnProbe'; reason: ProbeBurnReason; detail: string };
export type ExpireProbe = { type: 'ExpireProbe'; reason: ProbeExpiryReason };
export type ProbeCommand =
  CreateProbe | RegisterProbe | UpdateProbe | TriggerProbe | FireProbe | BurnProbe | ExpireProbe;

interface Known {
  probeId: string;
  agentId: number;
  ownerId: number;
  message: string;
  expiresAt: string;
  /** Who created it: its message is theirs, and says so when it fires. */
  by: By;
}
export type Probe =
  | { status: 'absent' }
  | (Known & { status: 'active' })
  | (Known & { status: 'fired'; firedAt: string })
  | (Known & { status: 'expired' });
type Present = Exclude<Probe, { status: 'absent' }>;

/** Unfired, not expired by an event, and its time has not come: the only state in which a probe can fire. */
export const isLive = (state: Probe, now: string): state is Known & { status: 'active' } =>
  state.status === 'active' && Date.parse(state.expiresAt) > Date.parse(now);

function evolve(state: Probe, event: ProbeEvent): Probe {
  if (event.type === 'ProbeCreated') {
    const { probeId, agentId, ownerId, message, expiresAt, by } = event.data;
    return { status: 'active', probeId, agentId, ownerId, message, expiresAt, by };
  }
  if (state.status === 'absent') return state;
  switch (event.type) {
    case 'ProbeUpdated':
      return { ...state, expiresAt: event.data.expiresAt };
    case 'ProbeFired':
    case 'ProbeBurned':
      return { ...state, status: 'fired', firedAt: event.data.firedAt };
    case 'ProbeExpired':
      return state.status === 'active' ? { ...state, status: 'expired' } : state;
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: ProbeCommand, state: Probe, ctx: { now: string }): ProbeEvent[] {
  if (command.type === 'CreateProbe') return create(command.probe, state);
  if (command.type === 'RegisterProbe') return register(command, state, ctx.now);
  if (state.status === 'absent') throw new DomainError('ErrNotFound', 'probe not found');
  const probeId = state.probeId;
  switch (command.type) {
    case 'UpdateProbe':
      return update(state, command, ctx.now);
    case 'TriggerProbe':
      return trigger(state, command, ctx.now);
    case 'FireProbe':
      mustBeLive(state, ctx.now);
      return [{ type: 'ProbeFired', data: { probeId, firedAt: ctx.now, messageId: command.messageId } }];
    case 'BurnProbe':
      mustBeLive(state, ctx.now);
      return [burned(state, ctx.now, command.reason, command.detail)];
    case 'ExpireProbe':
      return isLive(state, ctx.now) ? [{ type: 'ProbeExpired', data: { probeId, reason: command.reason } }] : [];
    default: {
      const never: never = command;
      return never;
    }
  }
}

function create(p: ProbeCreated['data'], state: Probe): ProbeEvent[] {
  if (state.status !== 'absent') throw new DomainError('ErrProbeExists', `probe ${p.probeId} already exists`);
  if (!PROBE_ID.test(p.probeId)) throw invalidInput('a probe id is 12 lowercase hex characters');
  const reason = validateMessage(p.message);
  if (reason !== null || p.message !== p.message.trim())
    throw invalidInput(reason ?? 'a probe message is stored stripped');
  if (Number.isNaN(Date.parse(p.expiresAt)) || p.tokenHash.length !== 64 || p.sealedToken === '')
    throw invalidInput('a probe needs an expiry, a token hash and a sealed token');
  return [{ type: 'ProbeCreated', data: p }];
}

/** probe_create's checks in xylocopa's order: agent_id, expires_in_hours, the message, the agent (then Colony's reach), the cap. */
function register(c: RegisterProbe, state: Probe, now: string): ProbeEvent[] {
  const { request, agent } = c;
  if (request.agentId.trim() === '') throw invalidInput('Error: agent_id is required.');
  if (!(request.expiresInHours > 0 && request.expiresInHours <= MAX_PROBE_HOURS))
    throw invalidInput(`Error: expires_in_hours must be in (0, ${MAX_PROBE_HOURS}].`);
  const invalid = validateMessage(request.message);
  if (invalid !== null) throw invalidInput(`Error: ${invalid}`);
  if (!agent)
    throw new DomainError('ErrNotFound', `Error: agent ${request.agentId} not found.`, { agent_id: request.agentId });
  if (!mayProbe(c.reach, agent.agentId)) throw forbidden(c.probe.by, agent.agentId);
  if (agent.activeProbes >= MAX_ACTIVE_PROBES) {
    throw new DomainError(
      'ErrProbeLimit',
      `Error: agent ${String(agent.agentId).slice(0, 8)} already has ${agent.activeProbes} active probes (limit ${MAX_ACTIVE_PROBES}). ` +
        'Use probe_update to expire some, or wait for them to time out.',
      { agent_id: agent.agentId, active: agent.activeProbes },
    );
  }
  const { probeId, n, ownerId, tokenHash, sealedToken, by } = c.probe;
  const message = request.message.trim();
  const expiresAt = new Date(Date.parse(now) + request.expiresInHours * 3_600_000).toISOString();
  return create({ probeId, n, agentId: agent.agentId, ownerId, tokenHash, sealedToken, message, expiresAt, by }, state);
}

/**
 * probe_update in xylocopa's order, after Colony's reach: a fired probe is refused, no time changes nothing, then the time must
 * parse and lie at most 168 h ahead (as at creation: xylocopa has no cap, which would let an update keep a
 * single-fire credential live forever); an expired probe stays expired. A time not in the future cancels
 * the probe (no tool may be named for it).
 */
function update(state: Present, c: UpdateProbe, now: string): ProbeEvent[] {
  const probeId = state.probeId;
  if (!mayProbe(c.reach, state.agentId)) throw forbidden(c.by, state.agentId);
  if (state.status === 'fired')
    throw new DomainError('ErrProbeFired', `Probe ${probeId} already fired — cannot update.`, { probe_id: probeId });
  if (c.expiresAt === '') return [];
  const at = parseIsoTimestamp(c.expiresAt);
  if (!at)
    throw invalidInput(`Error: invalid expires_at ISO timestamp: ${pyRepr(c.expiresAt)}`, { field: 'expires_at' });
  if (at.getTime() > Date.parse(now) + MAX_PROBE_HOURS * 3_600_000)
    throw invalidInput(`Error: expires_at must be at most ${MAX_PROBE_HOURS} hours from now.`, { field: 'expires_at' });
  if (!isLive(state, now))
    throw new DomainError('ErrProbeExpired', `Probe ${probeId} already expired — cannot update.`, {
      probe_id: probeId,
    });
  return [
    { type: 'ProbeUpdated', data: { probeId, expiresAt: at.toISOString(), by: c.by } },
    ...(at.getTime() <= Date.parse(now)
      ? [{ type: 'ProbeExpired' as const, data: { probeId, reason: 'manual' as const } }]
      : []),
  ];
}

/** An agent reaching past itself and its spawn lineage (ProbeReach). */
export const forbidden = (by: By, agentId: number): DomainError =>
  new DomainError(
    'ErrProbeForbidden',
    `Error: ${by.name} may probe only itself and the agents it spawned (down its spawn lineage); agent ${agentId} is neither.`,
    { agent_id: agentId },
  );

function trigger(state: Present, c: TriggerProbe, now: string): ProbeEvent[] {
  mustBeLive(state, now);
  if (!c.agentExists) return [burned(state, now, 'agent_missing', `agent ${state.agentId} no longer exists`)];
  const invalid = validateMessage(state.message);
  return invalid === null ? [] : [burned(state, now, 'invalid_message', invalid)];
}

function mustBeLive(state: Present, now: string): void {
  if (state.status === 'fired')
    throw new DomainError('ErrProbeFired', `Probe already fired at ${state.firedAt}`, { probe_id: state.probeId });
  if (!isLive(state, now))
    throw new DomainError('ErrProbeExpired', `Probe expired at ${state.expiresAt}`, { probe_id: state.probeId });
}

const burned = (state: Present, now: string, reason: ProbeBurnReason, detail: string): ProbeEvent => ({
  type: 'ProbeBurned',
  data: { probeId: state.probeId, firedAt: now, reason, detail },
});

export const probeDecider: Decider<Probe, ProbeCommand, ProbeEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
