import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RepeatedFailure } from '../../../src/engine/pg/repeated-failure.js';

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

  it('is told when it starts, reminded while it goes on, and told once that it ended', () => {
    const { failure, told, tick } = recorder();
    failure.succeeded();
    assert.deepEqual(told, [], 'working is not news');
    for (let i = 0; i < 150; i++, tick(1000)) failure.failed(new Error('store away'));
    failure.succeeded();
    failure.succeeded();
    assert.deepEqual(told, [
      'failed: store away (1, 2026-01-01T00:00:00.000Z)',
      'still: store away (61, 2026-01-01T00:00:00.000Z)',
      'still: store away (121, 2026-01-01T00:00:00.000Z)',
      'recovered (150, 2026-01-01T00:00:00.000Z)',
    ]);
  });

  it('tells a different failure at once, as a new one, and a failure after a recovery as new', () => {
    const { failure, told, tick } = recorder();
    failure.failed(new Error('store away'));
    tick(1000);
    failure.failed(new Error('store away'));
    tick(1000);
    failure.failed(new Error('position 7 is not there'));
    tick(1000);
    failure.succeeded();
    tick(1000);
    failure.failed('plain text');
    assert.deepEqual(told, [
      'failed: store away (1, 2026-01-01T00:00:00.000Z)',
      'failed: position 7 is not there (1, 2026-01-01T00:00:02.000Z)',
      'recovered (1, 2026-01-01T00:00:02.000Z)',
      'failed: plain text (1, 2026-01-01T00:00:04.000Z)',
    ]);
  });
});
