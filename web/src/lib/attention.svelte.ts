import { get } from './api';
import { onEventBursts, type LogEvent } from './stream.svelte';
import type { Attention, NodeProblem } from './types';

/**
 * What waits on the owner (GET /api/attention), shared by the navigation's counts and the "Needs you"
 * page: fetched once at sign-in, again once per burst of events that can add or clear an item — in every
 * open tab, so a decision taken in one disappears from all. OAuth authorization requests and this node's
 * trouble following its store live in the serving process, not the log, so they are polled too (a hidden
 * tab skips its turns): the OAuth count (the owner's) and GET /health.
 */
const EMPTY: Attention = {
  counts: { total: 0, approvals: 0, requests: 0, goals: 0, runs: 0, quarantined: 0, breakers: 0, verdicts: 0, oauth: 0, node: 0 },
  proposals: [], requests: [], goals: [], failing_agents: [], breakers: [], verdicts: [], quarantined: [], oauth_waiting: 0, node: null,
};
export const attention = $state({ data: EMPTY, loaded: false, error: '' });

const RELEVANT = /^(proposal|goal|resource-request|run|runtime|agent|breaker|task|oauth)-/;
const relevant = (e: LogEvent): boolean =>
  RELEVANT.test(e.stream_id) || (e.type === 'MessagePosted' && e.actor === 'system');

// Bumped when watching stops: an answer that arrives after that (a 401 after sign-out) changes nothing.
let generation = 0;

async function fetchOnce(): Promise<void> {
  const mine = generation;
  try {
    const data = await get<Attention>('/api/attention');
    if (mine !== generation) return;
    attention.data = data;
    attention.error = '';
  } catch (e) {
    if (mine !== generation) return;
    attention.error = (e as Error).message;
  } finally {
    if (mine === generation) attention.loaded = true;
  }
}

// One request at a time: a decision's own reload and the stream's refresh of it, arriving together, make
// one fetch and, if asked again meanwhile, one more after it — never two lists rendered over each other.
let inflight: Promise<void> | null = null;
let inflightOf = -1;
let again = false;
export function loadAttention(): Promise<void> {
  // Signed out (a poll or a page's reload landing after it): nothing to ask, and a 401 would sign out again.
  if (!stop) return Promise.resolve();
  // A fetch of a session that ended is no one to wait on: the new one starts its own.
  if (inflight && inflightOf === generation) {
    again = true;
    return inflight;
  }
  const mine = generation;
  const current: Promise<void> = (async () => {
    do {
      again = false;
      await fetchOnce();
    } while (again && mine === generation);
  })().finally(() => { if (inflight === current) inflight = null; });
  inflight = current;
  inflightOf = mine;
  return current;
}

/** Only the OAuth count is polled (cheap); the whole list is fetched again when it changed. */
async function pollOAuth(): Promise<void> {
  const { waiting } = await get<{ waiting: number }>('/api/oauth/requests').catch(() => ({ waiting: attention.data.oauth_waiting }));
  if (waiting !== attention.data.oauth_waiting) await loadAttention();
}

/**
 * GET /health needs no token: 503 `degraded` carries the node's problem as /api/attention does. Its coming
 * and going reloads the list (the counts change); while it lasts its fields (attempts, since) are taken as
 * they are, so the card never shows an old count.
 */
async function pollHealth(): Promise<void> {
  const mine = generation;
  const health = await fetch('/health')
    .then((r) => r.json() as Promise<{ status?: string } & Partial<NodeProblem>>)
    .catch(() => null);
  if (!health || mine !== generation) return;
  const degraded = health.status === 'degraded';
  if (degraded !== (attention.data.node !== null)) return loadAttention();
  if (degraded) {
    const { kind = 'follow', reason = '', code = '', since = '', attempts = 0 } = health;
    attention.data.node = { kind, reason, code, since, attempts };
  }
}

let stop: (() => void) | null = null;
/** Starts keeping the list current (at sign-in). */
export function watchAttention(polls: boolean): void {
  stop?.();
  const off = onEventBursts(relevant, () => void loadAttention(), 250);
  const timer = setInterval(() => {
    if (document.hidden) return;
    if (polls) void pollOAuth();
    void pollHealth();
  }, 3000);
  stop = () => { off(); clearInterval(timer); stop = null; };
  void loadAttention();
}

/** Stops keeping it (at sign-out) without asking the server again; what is in flight is dropped. */
export function unwatchAttention(): void {
  stop?.();
  generation++;
  attention.data = EMPTY;
  attention.loaded = false;
}
