import type { StoredEvent } from '../engine/event.js';
import { readAll } from '../engine/store.js';
import { LogTick } from '../runtime/log-tick.js';
import type { App } from '../app.js';
import { resourceListChangedBy, resourceUrisTouchedBy } from './resources/index.js';
import { mayReadTouched, tenantOf } from './resources/access.js';
import type { McpContext } from './context.js';
import { type Caller } from '../events/principals.js';

/**
 * Live resource updates for both MCP revisions: a 2025 session's `resources/subscribe` and a 2026-07-28
 * `subscriptions/listen` stream each register a watcher here. The watch follows the log itself (this
 * process's commits at once, other processes' — `colony` CLI, a stdio agent — within `POLL_MS`), works
 * out which resource URIs each event changed *for the watcher's tenant* (agent names repeat across
 * tenants), and tells a watcher only about URIs its principal may read now, so a subscription never
 * becomes a side channel into a peer's runs or another tenant. It runs only while someone watches.
 */
export const POLL_MS = 500;
const PAGE = 1000;

export interface Watcher {
  /** The principal as it is now (a revoked token or a narrowed scope stops the notifications). */
  caller(): Caller | null;
  /** When set, only these URIs are announced (2025 sessions); a listen stream filters on its own. */
  readonly uris?: ReadonlySet<string>;
  updated(uri: string): void;
  listChanged(): void;
  /** Its principal is gone (token revoked or expired): the watch drops it and says so once. */
  revoked?(): void;
}

/** One watch per MCP context (a process serves one), made when the first subscription needs it. */
const watches = new WeakMap<McpContext, ResourceWatch>();
export function watchOf(ctx: McpContext): ResourceWatch {
  let watch = watches.get(ctx);
  if (!watch) watches.set(ctx, (watch = new ResourceWatch(ctx)));
  return watch;
}

export class ResourceWatch {
  private readonly watchers = new Set<Watcher>();
  private ticks: LogTick | null = null;
  private cursor = 0;

  constructor(private readonly ctx: McpContext) {}

  add(watcher: Watcher): () => void {
    if (this.watchers.size === 0) this.start(this.ctx.app);
    this.watchers.add(watcher);
    return () => {
      this.watchers.delete(watcher);
      if (this.watchers.size === 0) this.stop();
    };
  }

  get size(): number {
    return this.watchers.size;
  }

  stop(): void {
    this.ticks?.stop();
    this.ticks = null;
  }

  private start(app: App): void {
    this.cursor = app.engine.durableHead();
    this.ticks = new LogTick(app, () => this.drain(), POLL_MS).start();
  }

  private drain(): void {
    const db = this.ctx.app.engine.db;
    if (!db.open) return this.stop();
    const to = this.ctx.app.engine.durableHead(); // announce only events committed and on disk
    for (;;) {
      const events = readAll(db, { after: this.cursor, to, limit: PAGE });
      for (const e of events) this.announce(e);
      if (this.watchers.size === 0) return this.stop(); // the last ones were revoked
      if (events.length === 0) return;
      this.cursor = events.at(-1)!.position;
      if (events.length < PAGE) return;
    }
  }

  private announce(e: StoredEvent): void {
    const byTenant = new Map<number, string[]>();
    const listChanged = resourceListChangedBy(e);
    for (const w of [...this.watchers]) {
      const caller = w.caller();
      if (!caller) {
        this.watchers.delete(w);
        w.revoked?.();
        continue;
      }
      const tenant = tenantOf(caller);
      let uris = byTenant.get(tenant);
      if (!uris) byTenant.set(tenant, (uris = resourceUrisTouchedBy(e, this.ctx.app.engine.db, tenant)));
      for (const uri of uris) if ((!w.uris || w.uris.has(uri)) && mayReadTouched(this.ctx, caller, uri)) w.updated(uri);
      // Only a change inside the watcher's tenant (the event touched one of its resources) changes its list.
      if (listChanged && uris.length > 0) w.listChanged();
    }
  }
}
