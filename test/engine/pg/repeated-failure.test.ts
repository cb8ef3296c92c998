import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RepeatedFailure } from '../../../src/engine/pg/repeated-failure.js';
import { DomainError } from '../../../src/errors.js';

/** The reports of a job retried every second (a node's follower): what a person reading the log is told. */
describe('a failure retried every second', () => {
  const recorder = (remindMs = 60_000) => {
    let now = Date.UTC(2026, 0, 1);
    const told: string[] = [];
    const failure = new RepeatedFailure(
      {
        onError: (e, f) =>
          told.push(
            `${f.reminder ? 'still' : 'failed'}: ${e instanceof Error ? e.message : String(e)} (${f.attempts}, ${f.since.toISOString()})`,
          ),
        onRecovered: (f) => told.push(`recovered (${f.attempts}, ${f.since.toISOString()})`),
      },
      () => now,
      remindMs,
    );
    const tick = (ms: number) => (now += ms);
    return { failure, told, tick };
  };
  const broken = (position: number, head: number) =>
    new DomainError('ErrChainBroken', `position ${position} is not there, though the log runs up to ${head}`, {
      position,
    });
  const away = (message: string) => new DomainError('ErrStoreUnavailable', message);

  it('is told when it starts, reminded while it goes on, and told once that it ended', () => {
    const { failure, told, tick } = recorder();
    failure.succeeded();
    assert.deepEqual(told, [], 'working is not news');
    for (let i = 0; i < 150; i++, tick(1000)) failure.failed(away('the store did not answer'));
    assert.equal(failure.current()?.attempts, 150);
    failure.succeeded();
    failure.succeeded();
    assert.equal(failure.current(), null);
    assert.deepEqual(told, [
      'failed: the store did not answer (1, 2026-01-01T00:00:00.000Z)',
      'still: the store did not answer (61, 2026-01-01T00:00:00.000Z)',
      'still: the store did not answer (121, 2026-01-01T00:00:00.000Z)',
      'recovered (150, 2026-01-01T00:00:00.000Z)',
    ]);
  });

  it('knows a failure by its code and position, not by its text, which moves on its own', () => {
    const { failure, told, tick } = recorder();
    // Other nodes append meanwhile: the head the message names moves; the missing position does not.
    for (const head of [10, 11, 12]) {
      failure.failed(broken(4, head));
      tick(1000);
    }
    // A store away fails one way, then another: one failure.
    failure.failed(away('connection refused'));
    tick(1000);
    failure.failed(away('the store did not answer within 10 s'));
    tick(1000);
    failure.failed(new Error('Connection terminated unexpectedly'));
    tick(1000);
    failure.failed(new Error('Connection terminated due to connection timeout'));
    tick(1000);
    failure.succeeded();
    failure.failed('plain text');
    assert.deepEqual(told, [
      'failed: position 4 is not there, though the log runs up to 10 (1, 2026-01-01T00:00:00.000Z)',
      'failed: connection refused (1, 2026-01-01T00:00:03.000Z)',
      'failed: Connection terminated unexpectedly (1, 2026-01-01T00:00:05.000Z)',
      'recovered (2, 2026-01-01T00:00:05.000Z)',
      'failed: plain text (1, 2026-01-01T00:00:07.000Z)',
    ]);
    failure.failed(broken(5, 12));
    assert.match(told.at(-1)!, /^failed: position 5 is not there/, 'another position is another failure');
  });
});
