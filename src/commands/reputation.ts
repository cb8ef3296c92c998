import { DomainError } from '../errors.js';
import type { PrincipalEvent } from '../events/principals.js';
import type { EvidenceRecorded, ReputationEvent } from '../events/reputation.js';
import type { Decider } from '../engine/decider.js';

/**
 * The reputation decider on an agent's stream. Evidence is always recorded (it is a fact); reputation is
 * kept per config hash and domain, and a record starts from a seed row: 0.5 for a root agent, 70 % of the
 * parent's (or the previous config's) current score in that domain for a spawned agent or a new config —
 * so a first small delta never takes a fresh config from neutral to near zero, and a record that has
 * started is never seeded again (an earlier agent with the same config started it; a second seed would
 * inflate it). Quarantine is decided from the agent's mean domain score, which the caller reads after the
 * evidence is projected (in the same transaction), and only bad evidence can impose it: a good verdict on
 * a score that decay left below the threshold is not a reason to, nor is time decay alone. Only an owner
 * lifts a quarantine.
 */
export const BOOTSTRAP_SCORE = 0.5;
export const SEED_FRACTION = 0.7;

/** Facts about a config's record in one domain, read in the same transaction. */
export interface DomainRecord {
  /** Whether the config already has evidence in the domain. */
  started: boolean;
  /** What a new record is seeded from: the parent's config and its current score there (null: a root agent). */
  parent: { configHash: string; score: number } | null;
}
export type RecordEvidence = { type: 'RecordEvidence'; evidence: EvidenceRecorded['data']; record: DomainRecord };
/** Starts the record of `evidence`'s config and domain from its seed, unless it has started. */
export type SeedRecord = {
  type: 'SeedRecord';
  evidence: Omit<EvidenceRecorded['data'], 'delta' | 'weight' | 'ref'>;
  record: DomainRecord;
};
/**
 * After `delta` was recorded: quarantine when the mean score is now strictly below the threshold. Only
 * bad evidence can quarantine, so `meanScore` (a read of every evidence row of the config) is null when
 * `delta` is not negative, and required when it is.
 */
export type CheckQuarantine = {
  type: 'CheckQuarantine';
  agentId: number;
  delta: number;
  meanScore: number | null;
  threshold: number;
};
export type Unquarantine = { type: 'Unquarantine'; agentId: number; by: string };
export type ReputationCommand = RecordEvidence | SeedRecord | CheckQuarantine | Unquarantine;

export type AgentTrust = { exists: boolean; quarantined: boolean };

function evolve(state: AgentTrust, event: PrincipalEvent | ReputationEvent): AgentTrust {
  switch (event.type) {
    case 'AgentRegistered':
      return { exists: true, quarantined: false };
    case 'AgentQuarantined':
      return { ...state, quarantined: true };
    case 'AgentUnquarantined':
      return { ...state, quarantined: false };
    default:
      return state;
  }
}

function decide(command: ReputationCommand, state: AgentTrust): ReputationEvent[] {
  if (!state.exists) throw new DomainError('ErrNotFound', 'agent not found');
  switch (command.type) {
    case 'RecordEvidence': {
      const { evidence, record } = command;
      const recorded: ReputationEvent = { type: 'EvidenceRecorded', data: evidence };
      if (evidence.ref.startsWith('seed')) return record.started ? [] : [recorded];
      return record.started ? [recorded] : [seed(evidence, record), recorded];
    }
    case 'SeedRecord':
      return command.record.started ? [] : [seed(command.evidence, command.record)];
    case 'CheckQuarantine': {
      if (!(command.delta < 0) || state.quarantined) return [];
      if (command.meanScore === null) throw new Error('bad evidence needs the mean score to be looked up');
      if (!(command.meanScore < command.threshold)) return [];
      const score = Math.round(command.meanScore * 1000) / 1000;
      return [
        {
          type: 'AgentQuarantined',
          data: {
            agentId: command.agentId,
            reason: `reputation=${score.toFixed(2)} below ${command.threshold}`,
            score,
            threshold: command.threshold,
          },
        },
      ];
    }
    case 'Unquarantine':
      if (!state.quarantined) return [];
      return [{ type: 'AgentUnquarantined', data: { agentId: command.agentId, by: command.by } }];
    default: {
      const never: never = command;
      return never;
    }
  }
}

function seed(e: SeedRecord['evidence'], record: DomainRecord): ReputationEvent {
  const { parent } = record;
  return {
    type: 'EvidenceRecorded',
    data: {
      agentId: e.agentId,
      ownerId: e.ownerId,
      configHash: e.configHash,
      domain: e.domain,
      delta: parent ? SEED_FRACTION * parent.score : BOOTSTRAP_SCORE,
      weight: 1,
      ref: parent ? `seed_from_parent:${parent.configHash}` : 'seed:bootstrap',
    },
  };
}

export const reputationDecider: Decider<AgentTrust, ReputationCommand, PrincipalEvent | ReputationEvent> = {
  snapshot: { name: 'agent-trust', version: 1 },
  initialState: () => ({ exists: false, quarantined: false }),
  evolve,
  decide,
};
