import { DomainError } from '../errors.js';

/**
 * The names an agent may take in a team, decided wherever an agent comes to be (registration, a spawn
 * proposal and its approval): never a reserved word, never the name of a person of the team, never
 * the name of another of the team's agents. The last two are facts of other streams, passed in.
 */

/**
 * Names a message, a mention or a verdict could be mistaken for: the owner's own, and words that stand
 * for a person or for Colony. An agent never takes one: an agent acts only as itself.
 */
export const RESERVED_AGENT_NAMES: ReadonlySet<string> = new Set([
  'owner',
  'system',
  'colony',
  'admin',
  'administrator',
  'root',
  'user',
  'users',
  'agent',
  'agents',
  'all',
  'everyone',
  'here',
  'channel',
  'anonymous',
  'approvals',
  'requests',
  'human',
  'operator',
  'moderator',
  'support',
  'security',
]);

/** Facts about a name in the team: the owner's own name, and whether an agent of the team has it already. */
export interface AgentNameFacts {
  ownerName: string | null;
  taken: boolean;
}

/** Refuses a name an agent of this owner may not take: reserved, the owner's own, or another agent's. */
export function checkAgentName(name: string, facts: AgentNameFacts): void {
  if (RESERVED_AGENT_NAMES.has(name) || facts.ownerName === name) {
    throw new DomainError(
      'ErrAgentNameReserved',
      `"${name}" cannot name an agent: it is reserved or it is a person's name in this team, and messages to it must reach that person`,
      { name },
    );
  }
  if (facts.taken) throw new DomainError('ErrAgentNameTaken', `an agent named ${name} already exists`, { name });
}
