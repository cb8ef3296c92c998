import { DomainError, invalidInput } from '../errors.js';
import {
  ENVELOPE_FOOTER,
  ENVELOPE_PREFIX,
  MAX_PROBE_MESSAGE,
  PROBE_ID,
  type ProbeBurnReason,
  type ProbeCreated,
  type ProbeEvent,
  type ProbeExpiryReason,
} from '../events/probes.js';
import type { Decider } from '../engine/decider.js';
import { type By } from '../events/principals.js';

/**
 * The probe decider (`probe-<n>` streams): created once, then fired, burned or expired at most once —
 * a probe is single-fire, and an expired one stays expired (unlike xylocopa, where a later probe_update
 * could revive it: expiry here is a fact, as stopping the agent was). Whether the expiry time has passed
 * is decided against the command's time (`ctx.now`), never a clock.
 */
export type CreateProbe = { type: 'CreateProbe'; probe: ProbeCreated['data'] };
export type UpdateProbe = { type: 'UpdateProbe'; expiresAt: string; by: By };
export type FireProbe = { type: 'FireProbe'; messageId: number };
export type BurnProbe = { type: 'BurnProbe'; reason: ProbeBurnReason; detail: string };
export type ExpireProbe = { type: 'ExpireProbe'; reason: ProbeExpiryReason };
export type ProbeCommand = CreateProbe | UpdateProbe | FireProbe | BurnProbe | ExpireProbe;

interface Known {
  probeId: string;
  agentId: number;
  ownerId: number;
  expiresAt: string;
}
export type Probe =
  | { status: 'absent' }
  | (Known & { status: 'active' })
  | (Known & { status: 'fired'; firedAt: string })
  | (Known & { status: 'expired' });

/**
 * xylocopa's `Probe.validate_message`, on the raw text (before stripping): the reason it is refused, or
 * null. Lengths and offsets count code points, as Python's do.
 */
export function validateMessage(message: string | null | undefined): string | null {
  if (message === null || message === undefined || message.trim() === '') return 'message is empty';
  const chars = [...message];
  if (chars.length > MAX_PROBE_MESSAGE) return `message exceeds ${MAX_PROBE_MESSAGE} chars (got ${chars.length})`;
  if (message.includes(ENVELOPE_PREFIX))
    return `message must not contain the envelope prefix '${ENVELOPE_PREFIX}' (would synthesize a nested envelope)`;
  if (message.includes(ENVELOPE_FOOTER))
    return `message must not contain the envelope footer '${ENVELOPE_FOOTER}' (would forge envelope termination)`;
  for (const [i, ch] of chars.entries()) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 && ch !== '\n' && ch !== '\t')
      return `message contains control char U+${code.toString(16).toUpperCase().padStart(4, '0')} at offset ${i}`;
    if (code === 0x7f) return `message contains DEL char at offset ${i}`;
  }
  return null;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Jan 5 3:07pm`, in UTC. */
export function envelopeTime(iso: string): string {
  const d = new Date(iso);
  const h = d.getUTCHours();
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, '0')}${h < 12 ? 'am' : 'pm'}`;
}

/** What the agent receives: the message between a header naming the probe and a footer it cannot forge. */
export const probeEnvelope = (probeId: string, firedAt: string, message: string): string =>
  `${ENVELOPE_PREFIX}${probeId} fired (${envelopeTime(firedAt)})\n\n${message}\n\n${ENVELOPE_FOOTER}`;

/** Unfired, not expired by an event, and its time has not come: the only state in which a probe can fire. */
export const isLive = (state: Probe, now: string): state is Known & { status: 'active' } =>
  state.status === 'active' && Date.parse(state.expiresAt) > Date.parse(now);

function evolve(state: Probe, event: ProbeEvent): Probe {
  if (event.type === 'ProbeCreated') {
    const d = event.data;
    return { status: 'active', probeId: d.probeId, agentId: d.agentId, ownerId: d.ownerId, expiresAt: d.expiresAt };
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
  if (command.type === 'CreateProbe') return create(command, state);
  if (state.status === 'absent') throw new DomainError('ErrNotFound', 'probe not found');
  const id = state.probeId;
  switch (command.type) {
    case 'UpdateProbe':
      if (state.status === 'fired')
        throw new DomainError('ErrProbeFired', `Probe ${id} already fired — cannot update.`, { probe_id: id });
      if (!isLive(state, ctx.now))
        throw new DomainError('ErrProbeExpired', `Probe ${id} already expired — cannot update.`, { probe_id: id });
      if (Number.isNaN(Date.parse(command.expiresAt))) throw invalidInput('expires_at must be an ISO timestamp');
      return [
        { type: 'ProbeUpdated', data: { probeId: id, expiresAt: command.expiresAt, by: command.by } },
        // A time that is not in the future is how a probe is cancelled (no tool may be named for it).
        ...(Date.parse(command.expiresAt) <= Date.parse(ctx.now)
          ? [{ type: 'ProbeExpired' as const, data: { probeId: id, reason: 'manual' as const } }]
          : []),
      ];
    case 'FireProbe':
    case 'BurnProbe':
      if (state.status === 'fired')
        throw new DomainError('ErrProbeFired', `Probe already fired at ${state.firedAt}`, { probe_id: id });
      if (!isLive(state, ctx.now))
        throw new DomainError('ErrProbeExpired', `Probe expired at ${state.expiresAt}`, { probe_id: id });
      return command.type === 'FireProbe'
        ? [{ type: 'ProbeFired', data: { probeId: id, firedAt: ctx.now, messageId: command.messageId } }]
        : [
            {
              type: 'ProbeBurned',
              data: { probeId: id, firedAt: ctx.now, reason: command.reason, detail: command.detail },
            },
          ];
    case 'ExpireProbe':
      return isLive(state, ctx.now) ? [{ type: 'ProbeExpired', data: { probeId: id, reason: command.reason } }] : [];
    default: {
      const never: never = command;
      return never;
    }
  }
}

function create(command: CreateProbe, state: Probe): ProbeEvent[] {
  const p = command.probe;
  if (state.status !== 'absent') throw new DomainError('ErrProbeExists', `probe ${p.probeId} already exists`);
  if (!PROBE_ID.test(p.probeId)) throw invalidInput('a probe id is 12 lowercase hex characters');
  const reason = validateMessage(p.message);
  if (reason !== null || p.message !== p.message.trim())
    throw invalidInput(reason ?? 'a probe message is stored stripped');
  if (Number.isNaN(Date.parse(p.expiresAt)) || p.tokenHash.length !== 64 || p.sealedToken === '')
    throw invalidInput('a probe needs an expiry, a token hash and a sealed token');
  return [{ type: 'ProbeCreated', data: p }];
}

export const probeDecider: Decider<Probe, ProbeCommand, ProbeEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
