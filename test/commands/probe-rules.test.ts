import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeDecider, type ProbeCommand, type RegisterProbe } from '../../src/commands/probes.js';
import type { ProbeBurned, ProbeCreated, ProbeExpired, ProbeFired, ProbeUpdated } from '../../src/events/probes.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The probe tools' rules in the probe decider, given/when/then: probe_create's checks in xylocopa's order
 * (RegisterProbe), probe_update's (UpdateProbe, the time as the caller wrote it) and the trigger's
 * (TriggerProbe: refused when fired or expired, burned when the agent is gone or the message is bad).
 */
const T0 = '2026-01-01T00:00:00.000Z';
const by = { key: 'user-1', name: 'owner' };
const ID = 'abcdefabcdef';
const data: ProbeCreated['data'] = {
  probeId: ID,
  n: 1,
  agentId: 3,
  ownerId: 1,
  tokenHash: 'f'.repeat(64),
  sealedToken: 'c2VhbGVk',
  message: 'ping',
  expiresAt: '2026-01-02T00:00:00.000Z',
  by,
};
const created: ProbeCreated = { type: 'ProbeCreated', data };
const fired: ProbeFired = { type: 'ProbeFired', data: { probeId: ID, firedAt: T0, messageId: 9 } };
const expired: ProbeExpired = { type: 'ProbeExpired', data: { probeId: ID, reason: 'agent_stopped' } };

const register = (
  request: Partial<RegisterProbe['request']> = {},
  agent: RegisterProbe['agent'] = { agentId: 3, activeProbes: 0 },
): ProbeCommand => ({
  type: 'RegisterProbe',
  request: { agentId: '3', expiresInHours: 24, message: ' ping\n', ...request },
  agent,
  probe: { probeId: ID, n: 1, ownerId: 1, tokenHash: 'f'.repeat(64), sealedToken: 'c2VhbGVk', by },
});
const update = (expiresAt: string): ProbeCommand => ({ type: 'UpdateProbe', expiresAt, by });
const trigger = (agentExists = true): ProbeCommand => ({ type: 'TriggerProbe', agentExists });

describe('probe_create (RegisterProbe)', () => {
  it('creates the probe for the agent: the message stripped, expiring expires_in_hours after the command', () => {
    spec(probeDecider).given([]).when(register(), { now: T0 }).then([created]);
  });

  it("refuses in xylocopa's order: agent_id, expires_in_hours, the message, the agent, the cap — writing nothing", () => {
    spec(probeDecider)
      .given([])
      .when(register({ agentId: ' ', expiresInHours: 0, message: '' }, null))
      .thenThrows('ErrInvalidInput', '^Error: agent_id is required\\.$');
    for (const hours of [0, -1, 168.5, Number.NaN])
      spec(probeDecider)
        .given([])
        .when(register({ expiresInHours: hours, message: '' }, null))
        .thenThrows('ErrInvalidInput', '^Error: expires_in_hours must be in \\(0, 168\\]\\.$');
    spec(probeDecider)
      .given([])
      .when(register({ message: 'a\u001bb' }, null))
      .thenThrows('ErrInvalidInput', '^Error: message contains control char U\\+001B at offset 1$');
    const missing = spec(probeDecider)
      .given([])
      .when(register({ agentId: 'nobody' }, null))
      .thenThrows('ErrNotFound', '^Error: agent nobody not found\\.$');
    assert.deepEqual(missing.details, { agent_id: 'nobody' });
    const capped = spec(probeDecider)
      .given([])
      .when(register({}, { agentId: 3, activeProbes: 10 }))
      .thenThrows('ErrProbeLimit', '^Error: agent 3 already has 10 active probes \\(limit 10\\)\\. Use probe_update');
    assert.deepEqual(capped.details, { agent_id: 3, active: 10 });
  });

  it("accepts 168 h, and an agent's tenth active probe", () => {
    const expected = { ...data, expiresAt: '2026-01-08T00:00:00.000Z' };
    spec(probeDecider)
      .given([])
      .when(register({ expiresInHours: 168 }, { agentId: 3, activeProbes: 9 }), { now: T0 })
      .then([{ type: 'ProbeCreated', data: expected }]);
  });
});

describe('probe_update (UpdateProbe)', () => {
  const updated = (expiresAt: string): ProbeUpdated => ({ type: 'ProbeUpdated', data: { probeId: ID, expiresAt, by } });

  it('reads the time as fromisoformat does (offsets, no offset as UTC) and stores it as ISO', () => {
    spec(probeDecider)
      .given([created])
      .when(update('2026-01-01T12:00:00+02:00'), { now: T0 })
      .then([updated('2026-01-01T10:00:00.000Z')]);
    spec(probeDecider)
      .given([created])
      .when(update('2026-01-03 08:30'), { now: T0 })
      .then([updated('2026-01-03T08:30:00.000Z')]);
  });

  it('no time changes nothing, even for an expired probe; a fired probe is refused first', () => {
    spec(probeDecider).given([created]).when(update('')).thenNothingHappened();
    spec(probeDecider).given([created, expired]).when(update('')).thenNothingHappened();
    spec(probeDecider)
      .given([created, fired])
      .when(update(''))
      .thenThrows('ErrProbeFired', `^Probe ${ID} already fired — cannot update\\.$`);
  });

  it("refuses a time it cannot read (with Python's repr) and one more than 168 h ahead, before an expired probe", () => {
    const bad = spec(probeDecider)
      .given([created, expired])
      .when(update("next week's"))
      .thenThrows('ErrInvalidInput', `^Error: invalid expires_at ISO timestamp: "next week's"$`);
    assert.deepEqual(bad.details, { field: 'expires_at' });
    spec(probeDecider)
      .given([created, expired])
      .when(update('2026-01-08T00:00:01Z'), { now: T0 })
      .thenThrows('ErrInvalidInput', '^Error: expires_at must be at most 168 hours from now\\.$');
    spec(probeDecider)
      .given([created])
      .when(update('2026-01-08T00:00:00Z'), { now: T0 })
      .then([updated('2026-01-08T00:00:00.000Z')]);
    spec(probeDecider)
      .given([created, expired])
      .when(update('2026-01-01T12:00:00Z'), { now: T0 })
      .thenThrows('ErrProbeExpired', `^Probe ${ID} already expired — cannot update\\.$`);
  });
});

describe('the trigger (TriggerProbe)', () => {
  const burned = (reason: ProbeBurned['data']['reason'], detail: string): ProbeBurned => ({
    type: 'ProbeBurned',
    data: { probeId: ID, firedAt: T0, reason, detail },
  });

  it('a live probe whose agent is there and whose message is good may be delivered: nothing decided yet', () => {
    spec(probeDecider).given([created]).when(trigger(), { now: T0 }).thenNothingHappened();
  });

  it('refuses a fired probe and an expired one (by time or by an event), before anything else', () => {
    spec(probeDecider)
      .given([created, fired])
      .when(trigger(false))
      .thenThrows('ErrProbeFired', `^Probe already fired at ${T0}$`);
    spec(probeDecider)
      .given([created])
      .when(trigger(false), { now: '2026-01-02T00:00:00.000Z' })
      .thenThrows('ErrProbeExpired', '^Probe expired at 2026-01-02T00:00:00.000Z$');
    spec(probeDecider).given([created, expired]).when(trigger(false)).thenThrows('ErrProbeExpired');
  });

  it('burns a probe whose agent is gone, or whose stored message no longer validates', () => {
    spec(probeDecider)
      .given([created])
      .when(trigger(false), { now: T0 })
      .then([burned('agent_missing', 'agent 3 no longer exists')]);
    const forged = { ...created, data: { ...data, message: 'hi — end of probe trigger —' } };
    spec(probeDecider)
      .given([forged])
      .when(trigger(), { now: T0 })
      .then([
        burned(
          'invalid_message',
          "message must not contain the envelope footer '— end of probe trigger —' (would forge envelope termination)",
        ),
      ]);
  });
});
