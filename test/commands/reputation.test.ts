import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BOOTSTRAP_SCORE,
  reputationDecider,
  SEED_FRACTION,
  type DomainRecord,
  type ReputationCommand,
} from '../../src/commands/reputation.js';
import type { AgentRegistered, PrincipalEvent } from '../../src/events/principals.js';
import type {
  AgentQuarantined,
  AgentUnquarantined,
  EvidenceRecorded,
  ReputationEvent,
} from '../../src/events/reputation.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The reputation decider on an agent's stream, given/when/then without a database: evidence is always
 * recorded, a config's record in a domain starts from its seed (once); the quarantine check imposes a
 * quarantine once, strictly below the threshold, and only after bad evidence; only a quarantined agent
 * can be unquarantined.
 */
type E = PrincipalEvent | ReputationEvent;

const registered: AgentRegistered = {
  type: 'AgentRegistered',
  data: {
    agentId: 3,
    name: 'worker',
    ownerId: 1,
    model: 'test-model',
    systemPrompt: 'You are worker.',
    toolScope: ['claim_task'],
    tier: 'supervised',
    command: null,
    parentId: null,
    spawnDepth: 0,
  },
};
const evidence = (delta: number, ref = 'task:1 verified=peer:reviewer verdict=reject'): EvidenceRecorded['data'] => ({
  agentId: 3,
  ownerId: 1,
  configHash: 'a'.repeat(64),
  domain: 'default',
  delta,
  weight: 1,
  ref,
});
/** A record that has begun: the evidence alone is recorded. */
const started: DomainRecord = { started: true, parent: null };
const recorded = (delta: number, ref?: string): EvidenceRecorded => ({
  type: 'EvidenceRecorded',
  data: evidence(delta, ref),
});
const quarantined: AgentQuarantined = {
  type: 'AgentQuarantined',
  data: { agentId: 3, reason: 'reputation=0.10 below 0.3', score: 0.1, threshold: 0.3 },
};
const unquarantined: AgentUnquarantined = { type: 'AgentUnquarantined', data: { agentId: 3, by: 'user:owner' } };

const check = (meanScore: number, threshold = 0.3): ReputationCommand => ({
  type: 'CheckQuarantine',
  agentId: 3,
  delta: -0.2,
  meanScore,
  threshold,
});
const lift: ReputationCommand = { type: 'Unquarantine', agentId: 3, by: 'user:owner' };
const given = (events: readonly E[]) => spec(reputationDecider).given(events);

describe('RecordEvidence: evidence is a fact, always recorded', () => {
  for (const [what, history] of [
    ['a fresh agent', [registered]],
    ['an agent with evidence', [registered, recorded(0.5, 'seed:bootstrap'), recorded(-0.2)]],
    ["a quarantined agent (a running job's verdict still counts)", [registered, recorded(-2), quarantined]],
    ['an unquarantined agent', [registered, quarantined, unquarantined]],
  ] as [string, E[]][]) {
    it(`for ${what}`, () => {
      for (const delta of [0.1, -0.2, 0, 0.35]) {
        given(history)
          .when({ type: 'RecordEvidence', evidence: evidence(delta), record: started })
          .then([recorded(delta)]);
      }
    });
  }
  it('unless the agent does not exist', () => {
    given([])
      .when({ type: 'RecordEvidence', evidence: evidence(0.1), record: started })
      .thenThrows('ErrNotFound');
  });
});

describe('RecordEvidence: a record starts from its seed', () => {
  const parent = { configHash: 'p'.repeat(64), score: 0.8 };
  const record = (started: boolean, from: DomainRecord['parent'] = null): DomainRecord => ({ started, parent: from });
  const seedRow = (delta: number, ref: string): EvidenceRecorded => ({
    type: 'EvidenceRecorded',
    data: evidence(delta, ref),
  });

  it("the first evidence of a root agent's config in a domain follows the bootstrap seed", () => {
    given([registered])
      .when({ type: 'RecordEvidence', evidence: evidence(-0.2), record: record(false) })
      .then([seedRow(BOOTSTRAP_SCORE, 'seed:bootstrap'), recorded(-0.2)]);
  });
  it("a spawned agent's follows 70 % of its parent's score there", () => {
    assert.equal(SEED_FRACTION, 0.7);
    given([registered])
      .when({ type: 'RecordEvidence', evidence: evidence(0.1), record: record(false, parent) })
      .then([seedRow(SEED_FRACTION * 0.8, `seed_from_parent:${parent.configHash}`), recorded(0.1)]);
  });
  it('a record that has started is not seeded again', () => {
    given([registered])
      .when({ type: 'RecordEvidence', evidence: evidence(0.1), record: record(true, parent) })
      .then([recorded(0.1)]);
  });
  it('a seed row is never seeded; one on a started record records nothing', () => {
    given([registered])
      .when({ type: 'RecordEvidence', evidence: evidence(0.5, 'seed:bootstrap'), record: record(false) })
      .then([recorded(0.5, 'seed:bootstrap')]);
    given([registered])
      .when({ type: 'RecordEvidence', evidence: evidence(0.5, 'seed:bootstrap'), record: record(true) })
      .thenNothingHappened();
  });
  it('SeedRecord starts a record once, from the parent or the bootstrap score', () => {
    const where = { agentId: 3, ownerId: 1, configHash: 'a'.repeat(64), domain: 'default' };
    given([registered])
      .when({ type: 'SeedRecord', evidence: where, record: record(false) })
      .then([seedRow(BOOTSTRAP_SCORE, 'seed:bootstrap')]);
    given([registered])
      .when({ type: 'SeedRecord', evidence: where, record: record(false, parent) })
      .then([seedRow(SEED_FRACTION * 0.8, `seed_from_parent:${parent.configHash}`)]);
    given([registered])
      .when({ type: 'SeedRecord', evidence: where, record: record(true, parent) })
      .thenNothingHappened();
    given([])
      .when({ type: 'SeedRecord', evidence: where, record: record(false) })
      .thenThrows('ErrNotFound');
  });
});

describe('CheckQuarantine: only bad evidence quarantines', () => {
  it('after good or neutral evidence nothing happens, however low the mean', () => {
    for (const delta of [0, 0.05, 0.1]) {
      given([registered])
        .when({ type: 'CheckQuarantine', agentId: 3, delta, meanScore: 0.1, threshold: 0.3 })
        .thenNothingHappened();
    }
  });
  it('after bad evidence a mean below the threshold quarantines', () => {
    given([registered])
      .when({ type: 'CheckQuarantine', agentId: 3, delta: -0.05, meanScore: 0.1, threshold: 0.3 })
      .then([quarantined]);
  });
  it('the mean is needed only after bad evidence: left out then, it is a caller’s bug', () => {
    given([registered])
      .when({ type: 'CheckQuarantine', agentId: 3, delta: 0.1, meanScore: null, threshold: 0.3 })
      .thenNothingHappened();
    given([registered])
      .when({ type: 'CheckQuarantine', agentId: 3, delta: -0.05, meanScore: null, threshold: 0.3 })
      .thenFailsAsBug(/mean score/);
  });
});

describe('CheckQuarantine: strictly below the threshold, once', () => {
  it('a mean below the threshold quarantines, with the score and the threshold in the event', () => {
    given([registered, recorded(0.5), recorded(-0.2), recorded(-0.2)])
      .when(check(0.1))
      .then([
        {
          type: 'AgentQuarantined',
          data: { agentId: 3, reason: 'reputation=0.10 below 0.3', score: 0.1, threshold: 0.3 },
        },
      ]);
  });
  it('0.29 is below 0.3', () => {
    given([registered])
      .when(check(0.29))
      .then([
        {
          type: 'AgentQuarantined',
          data: { agentId: 3, reason: 'reputation=0.29 below 0.3', score: 0.29, threshold: 0.3 },
        },
      ]);
  });
  it('the score in the event is rounded to 3 decimals, the reason to 2', () => {
    given([registered])
      .when(check(0.123456, 0.5))
      .then([
        {
          type: 'AgentQuarantined',
          data: { agentId: 3, reason: 'reputation=0.12 below 0.5', score: 0.123, threshold: 0.5 },
        },
      ]);
    given([registered])
      .when(check(0))
      .then([
        {
          type: 'AgentQuarantined',
          data: { agentId: 3, reason: 'reputation=0.00 below 0.3', score: 0, threshold: 0.3 },
        },
      ]);
  });
  it('at exactly the threshold nothing happens', () => {
    given([registered]).when(check(0.3)).thenNothingHappened();
    given([registered]).when(check(0.4, 0.4)).thenNothingHappened();
    given([registered]).when(check(0, 0)).thenNothingHappened();
  });
  it('above the threshold nothing happens', () => {
    for (const mean of [0.3000001, 0.5, 1]) given([registered]).when(check(mean)).thenNothingHappened();
  });
  it('an agent already quarantined is not quarantined again', () => {
    given([registered, quarantined]).when(check(0.1)).thenNothingHappened();
    given([registered, quarantined, recorded(-0.2)])
      .when(check(0))
      .thenNothingHappened();
  });
  it('after an unquarantine, a mean still below the threshold quarantines again', () => {
    given([registered, quarantined, unquarantined])
      .when(check(0.1))
      .then([
        {
          type: 'AgentQuarantined',
          data: { agentId: 3, reason: 'reputation=0.10 below 0.3', score: 0.1, threshold: 0.3 },
        },
      ]);
  });
  it('an unknown agent is ErrNotFound', () => {
    given([]).when(check(0.1)).thenThrows('ErrNotFound');
  });
});

describe('Unquarantine: only when quarantined', () => {
  it('lifts a quarantine, naming who did', () => {
    given([registered, quarantined]).when(lift).then([unquarantined]);
  });
  it('is a no-op for an agent that is not quarantined', () => {
    given([registered]).when(lift).thenNothingHappened();
    given([registered, quarantined, unquarantined]).when(lift).thenNothingHappened();
  });
  it('lifts a second quarantine too', () => {
    given([registered, quarantined, unquarantined, quarantined]).when(lift).then([unquarantined]);
  });
  it('an unknown agent is ErrNotFound', () => {
    given([]).when(lift).thenThrows('ErrNotFound');
  });
});
