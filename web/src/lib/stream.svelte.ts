/**
 * The console's live feed: one EventSource on /api/events (the session cookie authenticates it). It
 * starts after the position the session answer carried (`after=N`), not at the head when it connects
 * (`after=now`): pages load what is there over REST after that answer, and an event committed between a
 * page's load and the feed's connect would otherwise reach neither. On a drop the browser reconnects with
 * Last-Event-ID, so nothing is missed or seen twice.
 */
export interface LogEvent { position: number; stream_id: string; version: number; type: string; goal_id: number | null; data: Record<string, unknown>; recorded_at: string; actor: string }
type Listener = (e: LogEvent) => void;

export const live = $state({ connected: false, position: 0 });
const listeners = new Set<Listener>();
let source: EventSource | null = null;

export function startStream(after: number): void {
  if (source) return;
  source = new EventSource(`/api/events?after=${after}&plain=1`);
  source.onopen = () => { live.connected = true; };
  source.onerror = () => { live.connected = false; };
  // Frames carry no `event:` name (the type is in the data), so every one is a plain message.
  source.onmessage = (m) => deliver(m);
}

function deliver(m: MessageEvent): void {
  let e: LogEvent;
  try {
    e = JSON.parse(m.data as string) as LogEvent;
  } catch {
    return;
  }
  live.position = Math.max(live.position, e.position);
  for (const l of listeners) l(e);
}

export function stopStream(): void {
  source?.close();
  source = null;
  live.connected = false;
}

/** Calls `fn` for every live event until the returned function is called (a page's cleanup). */
export function onEvent(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * Calls `fn` once per burst of the events `wanted` picks — at once, then at most once per `ms` while they keep
 * coming (a page refetches once per burst, not per event) — until the returned function is called. A call
 * still waiting then is dropped: a page that has gone, or a console signed out, asks the server nothing more.
 */
export function onEventBursts(wanted: (e: LogEvent) => boolean, fn: () => void, ms = 150): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let again = false;
  const off = onEvent((e) => {
    if (!wanted(e)) return;
    if (timer) { again = true; return; }
    fn();
    timer = setTimeout(() => { timer = null; if (again) { again = false; fn(); } }, ms);
  });
  return () => {
    off();
    if (timer) clearTimeout(timer);
    timer = null;
  };
}
