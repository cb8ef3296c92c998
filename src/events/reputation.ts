import type { Event } from '../engine/event.js';

/**
 * Reputation on the agent's own stream: append-only evidence keyed by (owner, config
 * hash, domain), and the quarantine it may trigger. The score is never stored: it is computed at read
 * time from the evidence, decayed by age.
 */
export type EvidenceRecorded = Event<
  'EvidenceRecorded',
  {
    agentId: number;
    ownerId: number;
    configHash: string;
    domain: string;
    delta: number;
    weight: number;
    /** What it is evidence of, e.g. `task:12 verified=peer:reviewer`, `seed:bootstrap`, `seed_from_parent:<hash>`. */
    ref: string;
  }
>;

export type AgentQuarantined = Event<
  'AgentQuarantined',
  { agentId: number; reason: string; score: number; threshold: number }
>;
export type AgentUnquarantined = Event<'AgentUnquarantined', { agentId: number; by: string }>;

export type ReputationEvent = EvidenceRecorded | AgentQuarantined | AgentUnquarantined;
