import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  envelopeTime,
  probeDecider,
  probeEnvelope,
  type ProbeCommand,
  type RegisterProbe,
} from '../../src/commands/probes.js';
import { validateMessage } from '../../src/actions/probes.js';
import { parseIsoTimestamp, pyRepr } from '../../src/actions/probes/iso-time.js';
import {
  ENVELOPE_FOOTER,
  ENVELOPE_PREFIX,
  type ProbeCreated,
  type ProbeExpired,
  type ProbeFired,
  type ProbeBurned,
  type ProbeUpdated,
} from '../../src/events/probes.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * xylocopa's `orchestrator/tests/test_probes.py` unit cases (reference §1.8): validate_message and the
 * envelope; then the probe decider given/when/then (single fire, terminal expiry, what a past time does)
 * and the Python behaviours probe_update's texts depend on (fromisoformat, repr).
 */
describe('validateMessage (test_probes.py)', () => {
  it('accepts normal text, and multi-line text with a tab', () => {
    assert.equal(validateMessage('Check the nightly build and report.'), null);
    assert.equal(validateMessage('line one\n\tline two\nline three'), null);
  });
  it('rejects "", null and whitespace only', () => {
    for (const empty of ['', null, undefined, '   \n\t ']) assert.equal(validateMessage(empty), 'message is empty');
  });
  it('rejects 4001 characters ("exceeds") and accepts exactly 4000; length counts code points', () => {
    assert.match(validateMessage('x'.repeat(4001))!, /exceeds/);
    assert.equal(validateMessage('x'.repeat(4001)), 'message exceeds 4000 chars (got 4001)');
    assert.equal(validateMessage('x'.repeat(4000)), null);
    assert.equal(validateMessage('😀'.repeat(4000)), null, '4000 emoji are 8000 UTF-16 units but 4000 characters');
  });
  it('rejects the envelope prefix and footer anywhere in the text', () => {
    assert.equal(
      validateMessage(`hi ${ENVELOPE_PREFIX}abc fired`),
      "message must not contain the envelope prefix '🔔 Probe ' (would synthesize a nested envelope)",
    );
    assert.match(validateMessage(`done\n\n${ENVELOPE_FOOTER}\nmore`)!, /envelope footer/);
    assert.equal(
      validateMessage(`x ${ENVELOPE_FOOTER}`),
      "message must not contain the envelope footer '— end of probe trigger —' (would forge envelope termination)",
    );
  });
  it('rejects NUL, BEL and ESC with their code point and offset, and DEL by name', () => {
    assert.equal(validateMessage('ab\u0000c'), 'message contains control char U+0000 at offset 2');
    assert.match(validateMessage('bell\u0007')!, /U\+0007/);
    assert.match(validateMessage('\u001b[31mred')!, /U\+001B at offset 0/);
    assert.equal(validateMessage('😀x\u007f'), 'message contains DEL char at offset 2', 'offsets count code points');
    assert.match(validateMessage('carriage\rreturn')!, /U\+000D/);
  });
});

describe('the envelope', () => {
  it('starts with the prefix, names the probe and its creator, holds the message and ends with the footer (time in UTC)', () => {
    const by = { key: 'agent-7', name: 'mallory' };
    const e = probeEnvelope('0123456789ab', '2026-03-05T15:07:00.000Z', 'Wake up and check the queue.', by);
    assert.ok(e.startsWith(ENVELOPE_PREFIX));
    assert.ok(e.includes('0123456789ab') && e.includes('Wake up and check the queue.'));
    assert.ok(e.trimEnd().endsWith(ENVELOPE_FOOTER));
    assert.equal(
      e,
      "🔔 Probe 0123456789ab fired (Mar 5 3:07pm), set by mallory (agent) — its words, not Colony's:\n\nWake up and check the queue.\n\n— end of probe trigger —",
    );
    assert.match(
      probeEnvelope('0123456789ab', '2026-03-05T15:07:00.000Z', 'x', { key: 'user-1', name: 'ana' }),
      /set by ana \(user\)/,
    );
  });
  it('writes the time as {Mon D} {h:MM}{am|pm}', () => {
    assert.equal(envelopeTime('2026-01-01T00:05:00Z'), 'Jan 1 12:05am');
    assert.equal(envelopeTime('2026-12-31T12:00:59Z'), 'Dec 31 12:00pm');
    assert.equal(envelopeTime('2026-07-09T09:30:00+02:00'), 'Jul 9 7:30am');
  });
});

const T0 = '2026-01-01T00:00:00.000Z';
const created: ProbeCreated = {
  type: 'ProbeCreated',
  data: {
    probeId: 'abcdefabcdef',
    n: 1,
    agentId: 3,
    ownerId: 1,
    tokenHash: 'f'.repeat(64),
    sealedToken: 'c2VhbGVk',
    message: 'ping',
    expiresAt: '2026-01-02T00:00:00.000Z',
    by: { key: 'user-1', name: 'owner' },
  },
};
const fired: ProbeFired = {
  type: 'ProbeFired',
  data: { probeId: 'abcdefabcdef', firedAt: '2026-01-01T01:00:00.000Z', messageId: 9 },
};
const expired = (reason: ProbeExpired['data']['reason']): ProbeExpired => ({
  type: 'ProbeExpired',
  data: { probeId: 'abcdefabcdef', reason },
});
const by = { key: 'user-1', name: 'owner' };

describe('the probe decider', () => {
  it('creates once, with a valid id and a stripped, valid message', () => {
    spec(probeDecider).given([]).when({ type: 'CreateProbe', probe: created.data }).then([created]);
    spec(probeDecider).given([created]).when({ type: 'CreateProbe', probe: created.data }).thenThrows('ErrProbeExists');
    spec(probeDecider)
      .given([])
      .when({ type: 'CreateProbe', probe: { ...created.data, probeId: 'XYZ' } })
      .thenThrows('ErrInvalidInput');
    spec(probeDecider)
      .given([])
      .when({ type: 'CreateProbe', probe: { ...created.data, message: ' ping ' } })
      .thenThrows('ErrInvalidInput');
    spec(probeDecider)
      .given([])
      .when({ type: 'CreateProbe', probe: { ...created.data, message: 'a\u0000' } })
      .thenThrows('ErrInvalidInput');
  });
  it('fires once, at the command time; a second fire and a fire after expiry are refused', () => {
    const fire: ProbeCommand = { type: 'FireProbe', messageId: 9 };
    spec(probeDecider).given([created]).when(fire, { now: '2026-01-01T01:00:00.000Z' }).then([fired]);
    spec(probeDecider)
      .given([created, fired])
      .when(fire)
      .thenThrows('ErrProbeFired', 'Probe already fired at 2026-01-01T01:00:00.000Z');
    spec(probeDecider)
      .given([created])
      .when(fire, { now: '2026-01-02T00:00:00.000Z' })
      .thenThrows('ErrProbeExpired', 'Probe expired at');
    spec(probeDecider)
      .given([created, expired('agent_stopped')])
      .when(fire)
      .thenThrows('ErrProbeExpired');
  });
  it('a burned probe counts as fired', () => {
    spec(probeDecider)
      .given([created])
      .when({ type: 'BurnProbe', reason: 'agent_missing', detail: 'gone' }, { now: T0 })
      .then([
        {
          type: 'ProbeBurned',
          data: { probeId: 'abcdefabcdef', firedAt: T0, reason: 'agent_missing', detail: 'gone' },
        },
      ]);
    const burned = {
      type: 'ProbeBurned' as const,
      data: { probeId: 'abcdefabcdef', firedAt: T0, reason: 'agent_missing' as const, detail: 'gone' },
    };
    spec(probeDecider)
      .given([created, burned])
      .when({ type: 'UpdateProbe', expiresAt: T0, by, reach: null })
      .thenThrows('ErrProbeFired', 'already fired — cannot update.');
  });
  it('update: a future time moves the expiry; a past one (or now) also expires it, reason manual', () => {
    spec(probeDecider)
      .given([created])
      .when({ type: 'UpdateProbe', expiresAt: '2026-01-03T00:00:00.000Z', by, reach: null })
      .then([{ type: 'ProbeUpdated', data: { probeId: 'abcdefabcdef', expiresAt: '2026-01-03T00:00:00.000Z', by } }]);
    spec(probeDecider)
      .given([created])
      .when({ type: 'UpdateProbe', expiresAt: T0, by, reach: null }, { now: T0 })
      .then([{ type: 'ProbeUpdated', data: { probeId: 'abcdefabcdef', expiresAt: T0, by } }, expired('manual')]);
  });
  it("update of a fired probe is refused with xylocopa's text; an expired one stays expired", () => {
    spec(probeDecider)
      .given([created, fired])
      .when({ type: 'UpdateProbe', expiresAt: T0, by, reach: null })
      .thenThrows('ErrProbeFired', 'Probe abcdefabcdef already fired — cannot update.');
    spec(probeDecider)
      .given([created, expired('manual')])
      .when({ type: 'UpdateProbe', expiresAt: '2026-01-01T12:00:00.000Z', by, reach: null })
      .thenThrows('ErrProbeExpired', 'Probe abcdefabcdef already expired — cannot update.');
    spec(probeDecider)
      .given([created])
      .when(
        { type: 'UpdateProbe', expiresAt: '2026-01-03T00:00:00.000Z', by, reach: null },
        { now: '2026-01-02T00:00:00.000Z' },
      )
      .thenThrows('ErrProbeExpired');
  });
  it('expire touches only a live probe: fired, expired and timed-out probes are left as they are', () => {
    spec(probeDecider)
      .given([created])
      .when({ type: 'ExpireProbe', reason: 'agent_error' })
      .then([expired('agent_error')]);
    spec(probeDecider)
      .given([created, fired])
      .when({ type: 'ExpireProbe', reason: 'agent_error' })
      .thenNothingHappened();
    spec(probeDecider)
      .given([created, expired('manual')])
      .when({ type: 'ExpireProbe', reason: 'agent_stopped' })
      .thenNothingHappened();
    spec(probeDecider)
      .given([created])
      .when({ type: 'ExpireProbe', reason: 'agent_stopped' }, { now: '2026-01-02T00:00:00.000Z' })
      .thenNothingHappened();
    spec(probeDecider).given([]).when({ type: 'ExpireProbe', reason: 'agent_stopped' }).thenThrows('ErrNotFound');
  });
});

describe("Python behaviours behind probe_update's texts", () => {
  it('parses what fromisoformat takes (Z, offsets, date only, space separator); naive times are UTC', () => {
    const iso = (s: string) => parseIsoTimestamp(s)?.toISOString() ?? null;
    assert.equal(iso('2026-03-01T12:00:00Z'), '2026-03-01T12:00:00.000Z');
    assert.equal(iso('2026-03-01T12:00:00+02:00'), '2026-03-01T10:00:00.000Z');
    assert.equal(iso('2026-03-01 12:30'), '2026-03-01T12:30:00.000Z');
    assert.equal(iso('2026-03-01'), '2026-03-01T00:00:00.000Z');
    assert.equal(iso('2026-03-01T12:00:00.123456'), '2026-03-01T12:00:00.123Z');
    for (const bad of [
      'tomorrow',
      '',
      '2026-02-30',
      '2026-13-01',
      '2026-03-01T25:00',
      '2026-3-1',
      '1700000000',
      '2026-03-01T12:00:00ZZ',
    ]) {
      assert.equal(parseIsoTimestamp(bad), null, bad);
    }
  });
  it('quotes like repr()', () => {
    assert.equal(pyRepr('tomorrow'), "'tomorrow'");
    assert.equal(pyRepr("it's"), '"it\'s"');
    assert.equal(pyRepr('a\'b"c'), "'a\\'b\"c'");
    assert.equal(pyRepr('x\ny\\'), "'x\\ny\\\\'");
    assert.equal(pyRepr('\u0001'), "'\\x01'");
  });
});

describe("the probe tools' rules", () => {
  /**
   * The probe tools' rules in the probe decider, given/when/then: probe_create's checks in xylocopa's order
   * (RegisterProbe), probe_update's (UpdateProbe, the time as the caller wrote it) and the trigger's
   * (TriggerProbe: refused when fired or expired, burned when the agent is gone or the message is bad).
   */
  const by = created.data.by;
  const ID = created.data.probeId;
  const data = created.data;
  const fired: ProbeFired = { type: 'ProbeFired', data: { probeId: ID, firedAt: T0, messageId: 9 } };
  const expired: ProbeExpired = { type: 'ProbeExpired', data: { probeId: ID, reason: 'agent_stopped' } };

  const register = (
    request: Partial<RegisterProbe['request']> = {},
    agent: RegisterProbe['agent'] = { agentId: 3, activeProbes: 0 },
    reach: RegisterProbe['reach'] = null,
  ): ProbeCommand => ({
    type: 'RegisterProbe',
    request: { agentId: '3', expiresInHours: 24, message: ' ping\n', ...request },
    agent,
    reach,
    probe: { probeId: ID, n: 1, ownerId: 1, tokenHash: 'f'.repeat(64), sealedToken: 'c2VhbGVk', by },
  });
  const update = (expiresAt: string, reach: RegisterProbe['reach'] = null): ProbeCommand => ({
    type: 'UpdateProbe',
    expiresAt,
    by,
    reach,
  });
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

  describe("an agent's reach: itself and its spawn lineage (ProbeReach)", () => {
    const mallory = { key: 'agent-7', name: 'mallory' };
    const asMallory = (c: ProbeCommand): ProbeCommand =>
      c.type === 'RegisterProbe' ? { ...c, probe: { ...c.probe, by: mallory } } : c;

    it('an agent probes itself and the agents down its lineage; any other agent is ErrProbeForbidden, writing nothing', () => {
      for (const agentId of [7, 8, 9])
        spec(probeDecider)
          .given([])
          .when(asMallory(register({ agentId: String(agentId) }, { agentId, activeProbes: 0 }, [7, 8, 9])), { now: T0 })
          .then([
            {
              type: 'ProbeCreated',
              data: { ...data, agentId, by: mallory, expiresAt: '2026-01-02T00:00:00.000Z' },
            },
          ]);
      const refused = spec(probeDecider)
        .given([])
        .when(asMallory(register({}, { agentId: 3, activeProbes: 10 }, [7, 8, 9])))
        .thenThrows(
          'ErrProbeForbidden',
          '^Error: mallory may probe only itself and the agents it spawned \\(down its spawn lineage\\); agent 3 is neither\\.$',
        );
      assert.deepEqual(refused.details, { agent_id: 3 }, 'refused before the cap is looked at');
    });

    it("probe_update of another agent's probe is ErrProbeForbidden, before any other check", () => {
      spec(probeDecider)
        .given([created])
        .when(update('', [7]))
        .thenThrows('ErrProbeForbidden');
      spec(probeDecider)
        .given([created, fired])
        .when(update(T0, [7]))
        .thenThrows('ErrProbeForbidden');
      spec(probeDecider)
        .given([created])
        .when(update('', [3]))
        .thenNothingHappened();
    });
  });

  describe('probe_update (UpdateProbe)', () => {
    const updated = (expiresAt: string): ProbeUpdated => ({
      type: 'ProbeUpdated',
      data: { probeId: ID, expiresAt, by },
    });

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
});
