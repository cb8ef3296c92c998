import type { Database } from 'better-sqlite3';
import type { Response } from 'express';
import { STORED_EVENT_COLUMNS, type StoredEvent, type StoredEventRow } from '../engine/event.js';
import { readPage, toStoredEvent } from '../engine/store.js';
import { shows, type EventFilter } from './event-scope.js';

/**
 * One `GET /api/events` response. It keeps a cursor — the last log position it has examined — and is in
 * one of four modes:
 *
 * - `backlog`: reads the log after the cursor, a page at a time (yielding every ~10 ms), writing what the
 *   filter shows; a read that comes back empty switches to `live` in the same synchronous step, so no
 *   commit can fall between the two;
 * - `live`: takes the bus's events while each is the cursor's next position; a position that skips ahead
 *   (another process committed — the bus carries only this process's commits) or a poll that finds the
 *   head past the cursor sends it back to `backlog`;
 * - `waiting`: a write found more than `maxPendingBytes` unsent (the socket said stop). Nothing more is
 *   written or kept — the log is the buffer — until the socket drains, then `backlog` from the cursor.
 *   A consumer whose unsent bytes have not gone down for `stallMs` is cut off (socket destroyed);
 * - `closed`.
 *
 * So the bytes a connection holds are at most `maxPendingBytes` plus one frame, however slow its consumer,
 * and the ids it sends are the log's positions in order: a client resuming from its last id gets exactly
 * what came after.
 */
export interface StreamSettings {
  heartbeatMs: number;
  maxPendingBytes: number;
  stallMs: number;
  pageSize: number;
}

/** What a connection needs from the route that owns it. */
export interface StreamHub {
  readonly db: Database;
  /** The log's last position committed and on disk (engine.durableHead): the backlog reads no further. */
  durableHead(): number;
  readonly settings: StreamSettings;
  /** The live event's frame, shared by every connection that shows it. */
  frame(e: StoredEvent, plain?: boolean): string;
  notePending(bytes: number): void;
  noteDrop(): void;
  remove(connection: EventConnection): void;
}

export class EventConnection {
  private mode: 'backlog' | 'live' | 'waiting' | 'closed' = 'backlog';
  private page: StoredEventRow[] = [];
  private index = 0;
  private scheduled = false;
  private heartbeat: NodeJS.Timeout | null = null;
  private stall: NodeJS.Timeout | null = null;

  constructor(
    private readonly hub: StreamHub,
    private readonly res: Response,
    private readonly filter: EventFilter,
    private cursor: number,
  ) {}

  get waiting(): boolean {
    return this.mode === 'waiting';
  }

  start(): void {
    const { res } = this;
    res.on('close', () => this.closed());
    res.on('error', () => this.closed());
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.beat(), this.hub.settings.heartbeatMs);
    this.heartbeat.unref();
    this.catchUp();
  }

  onLive(e: StoredEvent): void {
    if (this.mode !== 'live' || e.position <= this.cursor) return;
    if (e.position !== this.cursor + 1) return this.backToLog();
    this.cursor = e.position;
    if (shows(this.hub.db, this.filter, e.streamId, e.type, e)) this.write(this.hub.frame(e, this.filter.plain));
  }

  onHead(head: number): void {
    if (this.mode === 'live' && head > this.cursor) this.backToLog();
  }

  /** Ends the response (the client resumes from its last id). */
  end(): void {
    if (this.mode === 'closed') return;
    this.closed();
    if (!this.res.writableEnded) this.res.end();
  }

  private backToLog(): void {
    this.mode = 'backlog';
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.mode !== 'backlog') return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.catchUp();
    });
  }

  private catchUp(): void {
    if (this.mode !== 'backlog') return;
    const { db, settings } = this.hub;
    if (!db.open) return this.end();
    const until = performance.now() + 10;
    for (;;) {
      if (this.index >= this.page.length) {
        if (performance.now() > until) return this.schedule();
        this.page = readPage<StoredEventRow>(db, STORED_EVENT_COLUMNS, {
          after: this.cursor,
          to: this.hub.durableHead(),
          limit: settings.pageSize,
        });
        this.index = 0;
        if (this.page.length === 0) {
          this.mode = 'live';
          return;
        }
      }
      const row = this.page[this.index++]!;
      this.cursor = row.position;
      const event = this.visibleRow(row);
      if (event && !this.write(this.hub.frame(event, this.filter.plain))) return;
    }
  }

  /** The row as an event if the filter shows it, parsing only what it shows (the type is checked first). */
  private visibleRow(row: StoredEventRow): StoredEvent | null {
    if (this.filter.types && !this.filter.types.has(row.type)) return null;
    const first = row.version === 1 ? toStoredEvent(row) : undefined;
    if (!shows(this.hub.db, this.filter, row.stream_id, row.type, first)) return null;
    return first ?? toStoredEvent(row);
  }

  /** Writes; false when it had to stop (`waiting`: the unsent bytes passed maxPendingBytes). */
  private write(chunk: string): boolean {
    const ok = this.res.write(chunk);
    const pending = this.res.writableLength;
    this.hub.notePending(pending);
    if (ok || pending <= this.hub.settings.maxPendingBytes) return true;
    this.mode = 'waiting';
    this.page = [];
    this.index = 0;
    let last = pending;
    this.stall = setInterval(() => {
      const now = this.res.writableLength;
      if (now < last) last = now;
      else this.cutOff();
    }, this.hub.settings.stallMs);
    this.stall.unref();
    // 'drain' is due: this write returned false.
    this.res.once('drain', () => {
      this.stopStallTimer();
      if (this.mode === 'waiting') this.backToLog();
    });
    return false;
  }

  private cutOff(): void {
    this.hub.noteDrop();
    this.closed();
    this.res.destroy();
  }

  private beat(): void {
    if ((this.mode === 'live' || this.mode === 'backlog') && this.res.writableLength === 0)
      this.write(': keep-alive\n\n');
  }

  private stopStallTimer(): void {
    if (this.stall) clearInterval(this.stall);
    this.stall = null;
  }

  private closed(): void {
    if (this.mode === 'closed') return;
    this.mode = 'closed';
    this.page = [];
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.stopStallTimer();
    this.hub.remove(this);
  }
}
