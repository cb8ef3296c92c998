import { DomainError } from '../errors.js';
import type { PrincipalEvent } from '../events/principals.js';
import type { EvidenceRecorded, ReputationEvent } from '../events/reputation.js';
import type { Decider } from '../engine/decider.js';

/**
 * The reputation decider on an agent's stream: evidence is always recorded (it is a fact); quarantine
 * is decided from the agent's mean domain score, which the caller reads after the evidence is projected
 * (in the same transaction). Only an owner lifts a quarantine; time decay alone never imposes one —
 * the check runs only when evidence is appended.
 */
export type RecordEvidence = { type: 'RecordEvidence'; evidence: EvidenceRecorded['data'] };
export type CheckQuarantine = { type: 'CheckQuarantine'; agentId: number; meanScore: number; threshold: number };
export type Unquarantine = { type: 'Unquarantine'; agentId: number; by: string };
export type ReputationCommand = RecordEvidence | CheckQuarantine | Unquarantine;

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
    case 'RecordEvidence':
      return [{ type: 'EvidenceRecorded', data: command.evidence }];
    case 'CheckQuarantine': {
      if (state.quarantined || !(command.meanScore < command.threshold)) return [];
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

export const reputationDecider: Decider<AgentTrust, ReputationCommand, PrincipalEvent | ReputationEvent> = {
  snapshot: { name: 'agent-trust', version: 1 },
  initialState: () => ({ exists: false, quarantined: false }),
  evolve,
  decide,
};
