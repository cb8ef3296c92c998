import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { envelopeTime, probeDecider, probeEnvelope, type ProbeCommand } from '../../src/commands/probes.js';
import { validateMessage } from '../../src/actions/probes.js';
import { parseIsoTimestamp, pyRepr } from '../../src/actions/probes/iso-time.js';
import {
  ENVELOPE_FOOTER,
  ENVELOPE_PREFIX,
  type ProbeCreated,
  type ProbeExpired,
  type ProbeFired,
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
  it('starts with the prefix, names the probe, holds the message and ends with the footer (time in UTC)', () => {
    const e = probeEnvelope('0123456789ab', '2026-03-05T15:07:00.000Z', 'Wake up and check the queue.');
    assert.ok(e.startsWith(ENVELOPE_PREFIX));
    assert.ok(e.includes('0123456789ab') && e.includes('Wake up and check the queue.'));
    assert.ok(e.trimEnd().endsWith(ENVELOPE_FOOTER));
    assert.equal(
      e,
      '🔔 Probe 0123456789ab fired (Mar 5 3:07pm)\n\nWake up and check the queue.\n\n— end of probe trigger —',
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
      .when({ type: 'UpdateProbe', expiresAt: T0, by })
      .thenThrows('ErrProbeFired', 'already fired — cannot update.');
  });
  it('update: a future time moves the expiry; a past one (or now) also expires it, reason manual', () => {
    spec(probeDecider)
      .given([created])
      .when({ type: 'UpdateProbe', expiresAt: '2026-01-03T00:00:00.000Z', by })
      .then([{ type: 'ProbeUpdated', data: { probeId: 'abcdefabcdef', expiresAt: '2026-01-03T00:00:00.000Z', by } }]);
    spec(probeDecider)
      .given([created])
      .when({ type: 'UpdateProbe', expiresAt: T0, by }, { now: T0 })
      .then([{ type: 'ProbeUpdated', data: { probeId: 'abcdefabcdef', expiresAt: T0, by } }, expired('manual')]);
  });
  it("update of a fired probe is refused with xylocopa's text; an expired one stays expired", () => {
    spec(probeDecider)
      .given([created, fired])
      .when({ type: 'UpdateProbe', expiresAt: T0, by })
      .thenThrows('ErrProbeFired', 'Probe abcdefabcdef already fired — cannot update.');
    spec(probeDecider)
      .given([created, expired('manual')])
      .when({ type: 'UpdateProbe', expiresAt: '2026-01-01T12:00:00.000Z', by })
      .thenThrows('ErrProbeExpired', 'Probe abcdefabcdef already expired — cannot update.');
    spec(probeDecider)
      .given([created])
      .when({ type: 'UpdateProbe', expiresAt: '2026-01-03T00:00:00.000Z', by }, { now: '2026-01-02T00:00:00.000Z' })
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
