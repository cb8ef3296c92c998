import type { Event } from '../engine/event.js';
import { type By } from './principals.js';

/**
 * Probes (xylocopa's): one-shot wake-up webhooks for an agent. Whoever holds the
 * token may POST `/probes/<token>` once; the probe's message then reaches the agent as a DM wrapped in
 * the envelope, and the DM wakes it. Each probe is its own `probe-<n>` stream (n from the `probe` id
 * sequence, like every stream) while users see the 12-hex `probeId`, as in xylocopa.
 *
 * The token is a credential: events carry its sha256 (to find the probe when it is POSTed) and its
 * secretbox ciphertext under the master key (so probe_get can show the trigger URL again) — never the
 * plaintext.
 *
 * Lifecycle: active → fired (ProbeFired, or ProbeBurned when the trigger finds the probe unusable) |
 * expired (ProbeExpired; or simply `expires_at` passing, which the read side derives from the time).
 */
export type ProbeCreated = Event<
  'ProbeCreated',
  {
    probeId: string;
    n: number;
    agentId: number;
    ownerId: number;
    tokenHash: string;
    sealedToken: string;
    /** Stored stripped; validated raw before that (validateMessage). */
    message: string;
    expiresAt: string;
    by: By;
  }
>;

export type ProbeUpdated = Event<'ProbeUpdated', { probeId: string; expiresAt: string; by: By }>;

export type ProbeFired = Event<'ProbeFired', { probeId: string; firedAt: string; messageId: number }>;

/**
 * `time`: the expiry passed (the read side derives it from expires_at; the reason exists for a sweeper
 * or an import); `manual`: probe_update set a time that is not in the future; `agent_stopped` /
 * `agent_error`: the agent was stopped, or its run failed (xylocopa's expire-on-STOPPED/ERROR trigger).
 */
export type ProbeExpiryReason = 'time' | 'manual' | 'agent_stopped' | 'agent_error';
export type ProbeExpired = Event<'ProbeExpired', { probeId: string; reason: ProbeExpiryReason }>;

/**
 * The trigger found the probe unusable and used it up without delivering (xylocopa marks it fired): its
 * agent is gone, or its message fails re-validation.
 */
export type ProbeBurnReason = 'agent_missing' | 'invalid_message';
export type ProbeBurned = Event<
  'ProbeBurned',
  { probeId: string; firedAt: string; reason: ProbeBurnReason; detail: string }
>;

export type ProbeEvent = ProbeCreated | ProbeUpdated | ProbeFired | ProbeExpired | ProbeBurned;

export const probeStream = (n: number): string => `probe-${n}`;

export const PROBE_ID = /^[0-9a-f]{12}$/;
export const ENVELOPE_PREFIX = '🔔 Probe ';
export const ENVELOPE_FOOTER = '— end of probe trigger —';
export const MAX_PROBE_MESSAGE = 4000;
/** Active probes (unfired, unexpired) one agent may have. */
export const MAX_ACTIVE_PROBES = 10;
export const DEFAULT_PROBE_HOURS = 24;
export const MAX_PROBE_HOURS = 168;
