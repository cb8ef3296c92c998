import { get } from './api';
import { onEvent, throttle, type LogEvent } from './stream.svelte';
import type { Attention } from './types';

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

async function fetchOnce(): Promise<void> {
  try {
    attention.data = await get<Attention>('/api/attention');
    attention.error = '';
  } catch (e) {
    attention.error = (e as Error).message;
  } finally {
    attention.loaded = true;
  }
}

// One request at a time: a decision's own reload and the stream's refresh of it, arriving together, make
// one fetch and, if asked again meanwhile, one more after it — never two lists rendered over each other.
let inflight: Promise<void> | null = null;
let again = false;
export function loadAttention(): Promise<void> {
  if (inflight) {
    again = true;
    return inflight;
  }
  inflight = (async () => {
    do {
      again = false;
      await fetchOnce();
    } while (again);
  })().finally(() => { inflight = null; });
  return inflight;
}

/** Only the OAuth count is polled (cheap); the whole list is fetched again when it changed. */
async function pollOAuth(): Promise<void> {
  const { waiting } = await get<{ waiting: number }>('/api/oauth/requests').catch(() => ({ waiting: attention.data.oauth_waiting }));
  if (waiting !== attention.data.oauth_waiting) await loadAttention();
}

/** GET /health needs no token: 503 `degraded` names the node's problem by its code, which the list shows. */
async function pollHealth(): Promise<void> {
  const health = await fetch('/health').then((r) => r.json() as Promise<{ status?: string; code?: string }>).catch(() => null);
  if (!health) return;
  const code = health.status === 'degraded' ? (health.code ?? '') : null;
  if (code !== (attention.data.node?.code ?? null)) await loadAttention();
}

let stop: (() => void) | null = null;
/** Starts keeping the list current (at sign-in); the returned function stops it (at sign-out). */
export function watchAttention(polls: boolean): () => void {
  stop?.();
  void loadAttention();
  const refresh = throttle(() => void loadAttention(), 250);
  const off = onEvent((e) => { if (relevant(e)) refresh(); });
  const timer = setInterval(() => {
    if (document.hidden) return;
    if (polls) void pollOAuth();
    void pollHealth();
  }, 3000);
  stop = () => { off(); clearInterval(timer); attention.data = EMPTY; attention.loaded = false; stop = null; };
  return stop;
}
