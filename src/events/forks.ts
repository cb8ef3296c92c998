import type { Event } from '../engine/event.js';
import type { SecretScope } from './secrets.js';

/**
 * A what-if fork (`colony fork`): a new data dir whose log is one goal's history up to a position of
 * another log. Its first event, on its own stream `fork-origin`, names where it came from — the origin
 * log's head and the event it was cut at (position and hash: whoever holds the origin log can check that
 * the fork starts from exactly that prefix) — and what it left behind: the secrets it needs, named and
 * never copied. Every event after it is a copy of an origin event with its data, meta and time, re-chained.
 */
export const FORK_STREAM = 'fork-origin';

export interface ChainPoint {
  position: number;
  hash: string;
}

export interface SecretNeeded {
  name: string;
  scope: SecretScope;
}

export type LogForked = Event<
  'LogForked',
  {
    goalId: number;
    origin: {
      /** The origin log's last event when the fork was made. */
      head: ChainPoint;
      /** The last origin event the fork holds (what the goal's time travel showed at that position). */
      at: ChainPoint;
      /** The origin data dir, as the forking command resolved it. */
      dataDir: string;
    };
    /** The origin streams the fork copies (their events up to `at`, tokens left out). */
    streams: string[];
    events: number;
    /** Secrets in scope of the goal's owner, agents and tasks at that position: named here, values not copied. */
    secretsNotCopied: SecretNeeded[];
    by: string;
  }
>;

export type ForkEvent = LogForked;
