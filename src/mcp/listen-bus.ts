import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEventBus } from '@modelcontextprotocol/server';
import type { ResourceWatch } from './resource-watch.js';
import { type Caller } from '../events/principals.js';

type ServerEvent = Parameters<ServerEventBus['publish']>[0];
type Listener = (event: ServerEvent) => void;

/**
 * The change-event bus behind 2026-07-28 `subscriptions/listen` streams. The SDK's default bus hands
 * every event to every open stream, whoever opened it; Colony's must not (tenants, private runs). The
 * SDK opens a stream's subscription synchronously inside the request that asked for it, so the caller
 * of that request — kept in `requestCaller` around each modern request — is who the stream belongs to,
 * and the stream becomes a ResourceWatch watcher for that principal: it hears only about resources its
 * principal may read. `publish` (the SDK's notify sugar) is for process-wide list changes only.
 */
/** What a modern request's listen stream needs from the request that opened it. */
export interface ListenRequest {
  /** The principal as it is now (null once its token is revoked or expired). */
  caller(): Caller | null;
  /** Who it is, by kind, id and tenant (auth.ts principalKey): streams are counted per principal. */
  key: string;
  /** Ends the HTTP response carrying the stream: the SDK then tears the subscription down. */
  close(): void;
}
export const requestCaller = new AsyncLocalStorage<ListenRequest>();

/** Open listen streams one principal may hold (like the 2025 sessions' cap): one client cannot fill the process-wide cap. */
export const LISTEN_STREAMS_PER_PRINCIPAL = 32;

export class WatchBus implements ServerEventBus {
  private readonly listeners = new Set<Listener>();
  private readonly open = new Map<string, number>();

  constructor(private readonly watch: ResourceWatch) {}

  /** Whether this principal may open another listen stream now. */
  hasRoomFor(key: string): boolean {
    return (this.open.get(key) ?? 0) < LISTEN_STREAMS_PER_PRINCIPAL;
  }

  publish(event: ServerEvent): void {
    if (event.kind === 'resource_updated') return; // per-principal only, through the watch
    for (const listener of [...this.listeners]) listener(event);
  }

  subscribe(listener: Listener): () => void {
    const request = requestCaller.getStore();
    if (!request) return () => undefined; // not opened by an authenticated request: it hears nothing
    this.listeners.add(listener);
    this.open.set(request.key, (this.open.get(request.key) ?? 0) + 1);
    const stop = this.watch.add({
      caller: () => request.caller(),
      updated: (uri) => listener({ kind: 'resource_updated', uri }),
      listChanged: () => listener({ kind: 'resources_list_changed' }),
      // Its token revoked or expired: the stream ends (and frees its slot) rather than idling on.
      revoked: () => request.close(),
    });
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.listeners.delete(listener);
      const left = (this.open.get(request.key) ?? 1) - 1;
      if (left > 0) this.open.set(request.key, left);
      else this.open.delete(request.key);
      stop();
    };
  }
}
