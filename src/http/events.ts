import type { Database } from 'better-sqlite3';
import type { Request, Response, Router } from 'express';
import type { Subscription } from 'rxjs';
import * as z from 'zod';
import { DomainError, isDomainError } from '../errors.js';
import { channelStream } from '../events/channels.js';
import type { StoredEvent } from '../engine/event.js';
import { goalStream } from '../events/goals.js';
import { readHead } from '../engine/store.js';
import { log } from '../log.js';
import type { McpContext } from '../mcp/context.js';
import { getGoal } from '../projections/goal-queries.js';
import { getStream } from '../projections/streams.js';
import { EventConnection, type StreamHub, type StreamSettings } from './event-connection.js';
import { eventFrame, type EventFilter } from './event-scope.js';
import { type Caller } from '../events/principals.js';

/**
 * `GET /api/events`: the log as Server-Sent Events, for the owner. Each frame is
 * `id: <position>`, `event: <type>`, `data: {position, stream_id, version, type, data, recorded_at, actor}`,
 * in log order; `Last-Event-ID` (or `?after=N`; the header wins) resumes after that position, `?goal=ID`
 * keeps the goal's streams, `?types=A,B` those types. Which events an owner sees and what their data
 * shows (the owner: the whole tenant; an agent: what its read tools show): event-scope.ts. How a connection
 * goes from the log to the bus and what a slow consumer costs: event-connection.ts.
 */
export interface EventsOptions {
  /** `: keep-alive` every this many ms while nothing waits to be written (15 s). */
  heartbeatMs?: number;
  /** Unsent bytes a connection may hold before it stops writing and waits for the socket (1 MiB). */
  maxPendingBytes?: number;
  /** A waiting connection whose unsent bytes have not gone down for this long is cut off (30 s). */
  stallMs?: number;
  /** How often the log's head is checked for commits made by other processes (the CLI). */
  pollMs?: number;
  /** Rows per backlog read. */
  pageSize?: number;
}

export interface EventsRoute {
  /** Open streams, those waiting for their socket, the most unsent bytes any held, streams cut off as stalled. */
  stats(): { connections: number; waiting: number; peakPendingBytes: number; dropped: number };
  /** Ends every open stream. */
  close(): void;
}

const STATUS: Record<string, number> = { ErrInvalidInput: 400, ErrGoalNotFound: 404 };
const Position = z
  .string()
  .regex(/^\d{1,15}$/, 'expected a decimal integer')
  .transform(Number);
// `after=now`: from the head on (a page that loaded what is there over REST wants only what comes next). `plain=1`: frames
// without the `event:` name, so a browser's EventSource gets every one in `onmessage` (named events need a listener per type).
const Query = z.strictObject({
  after: z.union([z.literal('now'), Position]).optional(),
  goal: Position.optional(),
  types: z.string().max(4096).optional(),
  plain: z.literal('1').optional(),
});
const TYPE_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

export function mountEvents(router: Router, ctx: McpContext, options: EventsOptions = {}): EventsRoute {
  const hub = new Hub(ctx, {
    heartbeatMs: options.heartbeatMs ?? 15_000,
    maxPendingBytes: options.maxPendingBytes ?? 1024 * 1024,
    stallMs: options.stallMs ?? 30_000,
    pollMs: options.pollMs ?? 500,
    pageSize: options.pageSize ?? 256,
  });
  router.get('/events', (req, res) => {
    let start: { after: number; filter: EventFilter };
    try {
      start = parseRequest(ctx, req.auth!.extra!.caller as Caller, req);
    } catch (e) {
      if (!isDomainError(e)) throw e;
      res
        .status(STATUS[e.code] ?? 400)
        .json({ error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } });
      return;
    }
    if (req.method === 'HEAD') return void res.status(200).type('text/event-stream').end(); // headers only: no stream to keep open
    hub.open(req, res, start.after, start.filter);
  });
  return hub;
}

function parseRequest(ctx: McpContext, caller: Caller, req: Request): { after: number; filter: EventFilter } {
  const db = ctx.app.engine.db;
  const tenant = caller.kind === 'owner' ? caller.userId : caller.ownerId;
  const parsed = Query.safeParse(req.query);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = ['query', ...issue.path.map(String)].join('.');
    throw new DomainError('ErrInvalidInput', `${at}: ${issue.message}`, { field: at });
  }
  const q = parsed.data;
  const header = req.get('last-event-id')?.trim();
  // "now" is what is on disk: a batch still waiting for its sync reaches the stream live, once it is.
  let after = q.after === 'now' ? ctx.app.engine.durableHead() : (q.after ?? 0);
  if (header) {
    const id = Position.safeParse(header);
    if (!id.success)
      throw new DomainError('ErrInvalidInput', 'Last-Event-ID must be an event position (a decimal integer)', {
        field: 'Last-Event-ID',
      });
    after = id.data; // the header wins: EventSource reconnects to the same URL, ?after and all
  }
  const head = readHead(db).position;
  if (after > head) {
    throw new DomainError(
      'ErrInvalidInput',
      `position ${after} is past the end of the log (${head}): this is not the log you were reading`,
      { after, head },
    );
  }
  let goalId: number | null = null;
  let goalChannel: string | null = null;
  if (q.goal !== undefined) {
    const goal = getGoal(db, q.goal);
    if (!goal || goal.ownerId !== tenant)
      throw new DomainError('ErrGoalNotFound', `goal ${q.goal} not found`, { goal_id: q.goal });
    goalId = goal.goalId;
    goalChannel = channelStream(goal.channelId);
    // Nothing of the goal precedes its stream and its channel (created just before it): start reading there.
    const starts = [goalStream(goalId), goalChannel].map((id) => getStream(db, id)?.firstPosition ?? 1);
    after = Math.max(after, Math.min(...starts) - 1);
  }
  let types: Set<string> | null = null;
  if (q.types !== undefined) {
    const names = q.types
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const bad = names.find((t) => !TYPE_NAME.test(t));
    if (names.length === 0 || names.length > 100 || bad !== undefined) {
      throw new DomainError('ErrInvalidInput', 'query.types: a comma-separated list of 1–100 event type names', {
        field: 'query.types',
      });
    }
    types = new Set(names);
  }
  const agent =
    caller.kind === 'agent'
      ? { agentId: caller.agentId, key: `agent-${caller.agentId}`, readable: new Map<number, boolean>() }
      : null;
  return { after, filter: { tenant, agent, goalId, goalChannel, types, plain: q.plain === '1' } };
}

class Hub implements EventsRoute, StreamHub {
  private readonly connections = new Set<EventConnection>();
  private readonly frames = new WeakMap<StoredEvent, string>();
  private subscription: Subscription | null = null;
  private poller: NodeJS.Timeout | null = null;
  private peak = 0;
  private drops = 0;

  constructor(
    private readonly ctx: McpContext,
    readonly settings: StreamSettings & { pollMs: number },
  ) {}

  get db(): Database {
    return this.ctx.app.engine.db;
  }

  durableHead(): number {
    return this.ctx.app.engine.durableHead();
  }

  open(req: Request, res: Response, after: number, filter: EventFilter): void {
    const connection = new EventConnection(this, res, filter, after);
    this.connections.add(connection);
    if (!this.subscription) {
      this.subscription = this.ctx.app.engine.bus.events$.subscribe({
        next: (e) => this.publish(e),
        complete: () => this.close(),
      });
      this.poller = setInterval(() => this.poll(), this.settings.pollMs);
      this.poller.unref();
    }
    req.socket.setNoDelay(true);
    connection.start();
  }

  remove(connection: EventConnection): void {
    this.connections.delete(connection);
    if (this.connections.size > 0) return;
    this.subscription?.unsubscribe();
    this.subscription = null;
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  frame(e: StoredEvent, plain = false): string {
    let frame = this.frames.get(e);
    if (frame === undefined) this.frames.set(e, (frame = eventFrame(this.db, e)));
    return plain ? frame.replace(/\nevent: [^\n]*/, '') : frame;
  }

  notePending(bytes: number): void {
    if (bytes > this.peak) this.peak = bytes;
  }

  noteDrop(): void {
    this.drops += 1;
  }

  stats() {
    let waiting = 0;
    for (const c of this.connections) if (c.waiting) waiting += 1;
    return { connections: this.connections.size, waiting, peakPendingBytes: this.peak, dropped: this.drops };
  }

  close(): void {
    for (const c of this.connections) c.end();
  }

  private publish(e: StoredEvent): void {
    for (const c of this.connections) {
      try {
        c.onLive(e);
      } catch (err) {
        log.error({ err }, 'an event stream failed; closing it');
        c.end();
      }
    }
  }

  /** Commits by other processes never reach this bus: a head past a live cursor sends it back to the log. */
  private poll(): void {
    if (!this.db.open || this.connections.size === 0) return;
    const head = this.durableHead();
    for (const c of this.connections) c.onHead(head);
  }
}
