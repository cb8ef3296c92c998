import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEventBus } from '@modelcontextprotocol/server';
import type { Caller } from './auth.js';
import type { ResourceWatch } from './resource-watch.js';

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
export const requestCaller = new AsyncLocalStorage<() => Caller | null>();

export class WatchBus implements ServerEventBus {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly watch: ResourceWatch) {}

  publish(event: ServerEvent): void {
    if (event.kind === 'resource_updated') return; // per-principal only, through the watch
    for (const listener of [...this.listeners]) listener(event);
  }

  subscribe(listener: Listener): () => void {
    const caller = requestCaller.getStore();
    if (!caller) return () => undefined; // not opened by an authenticated request: it hears nothing
    this.listeners.add(listener);
    const stop = this.watch.add({
      caller,
      updated: (uri) => listener({ kind: 'resource_updated', uri }),
      listChanged: () => listener({ kind: 'resources_list_changed' }),
    });
    return () => {
      this.listeners.delete(listener);
      stop();
    };
  }
}
