import type { Database } from 'better-sqlite3';
import { systemClock, type Clock } from '../clock.js';
import { migrate, openDatabase, type Durability, type Migration } from './db.js';
import { EventBus } from './bus.js';
import type { Event, EventRow, StoredEvent } from './event.js';
import { engineMigrations } from './schema.js';
import { assertAnchored } from './anchor.js';
import { importRows } from './command-log.js';
import { readHead, type ChainHead } from './store.js';
import { verifyChain, type VerifyOptions, type VerifyResult } from './verify.js';
import {
  handle,
  transact,
  type CommandOptions,
  type HandleOptions,
  type HandleResult,
  type TransactResult,
  type UnitOfWork,
} from './handle.js';
import type { Decider } from './decider.js';
import { GroupCommit } from './group-commit.js';
import type { AnyProjection } from './projection.js';
import { ProjectionRegistry } from './projection-registry.js';
import type { RebuildOptions, RebuildReport } from './rebuild.js';
import { Replica, type Primary } from './replica.js';

export interface EngineOptions {
  /** Database file, or ':memory:'. */
  file: string;
  durability?: Durability;
  clock?: Clock;
  projections?: readonly AnyProjection[];
  /** Schema migrations beyond the engine's own (their versions must be above the engine's). */
  migrations?: readonly Migration[];
  /** Progress of the start-up rebuild of outdated projections. */
  rebuild?: RebuildOptions;
  /** Skip bringing projections up to date on open — only for tools that rebuild them explicitly next. */
  skipStartupRebuild?: boolean;
  /** The store of record this database copies one tenant of, and writes through (replica.ts). */
  primary?: Primary;
  /** Called once the database is closed (a copy's file lock is let go then: pg/copy-file.ts). */
  onClose?: () => void;
}

/**
 * The engine facade: one database connection, the projections of the running code, the event bus.
 * Opening it migrates the schema and brings every projection up to date before anything else runs.
 */
export class Engine {
  readonly bus = new EventBus();
  /** Commands of concurrent MCP calls share one COMMIT (engine/group-commit.ts). */
  readonly group: GroupCommit;
  /** What the start-up rebuild did, if anything was outdated. */
  readonly startupRebuild: RebuildReport | null;
  /** Set when this database is a copy of a primary store's tenant (replica.ts). */
  replica: Replica | null = null;
  /** On a copy: the events opening brought in from the primary — the rows after the copy's head. */
  caughtUpOnOpen = 0;
  private onClose: (() => void) | undefined;

  private constructor(
    readonly db: Database,
    readonly clock: Clock,
    readonly projections: ProjectionRegistry,
    rebuildOptions: RebuildOptions | null,
  ) {
    this.group = new GroupCommit(db, this.bus, clock);
    this.startupRebuild = rebuildOptions ? projections.ensureCurrent(db, { now: clock, ...rebuildOptions }) : null;
  }

  static open(options: EngineOptions): Engine {
    const db = openDatabase(options.file, { durability: options.durability ?? 'full' });
    try {
      migrate(db, [...engineMigrations, ...(options.migrations ?? [])]);
      const registry = new ProjectionRegistry(options.projections ?? []);
      const engine = new Engine(
        db,
        options.clock ?? systemClock,
        registry,
        options.skipStartupRebuild ? null : (options.rebuild ?? {}),
      );
      if (options.primary) {
        engine.replica = new Replica(options.primary, db, registry, engine.clock);
        engine.group.replica = engine.replica;
        engine.caughtUpOnOpen = engine.catchUp();
      }
      engine.onClose = options.onClose;
      return engine;
    } catch (e) {
      options.primary?.close();
      db.close();
      throw e;
    }
  }

  handle<S, C, E extends Event>(
    decider: Decider<S, C, E>,
    streamId: string,
    command: C,
    options: HandleOptions,
  ): HandleResult<S, E> {
    return handle(this, decider, streamId, command, options);
  }

  transact<T>(options: CommandOptions, fn: (uow: UnitOfWork) => T): TransactResult<T> {
    return transact(this, options, fn);
  }

  /** Appends exported rows as they are (chain-checked), projects them and publishes them after commit. */
  importRows(rows: readonly EventRow[]): StoredEvent[] {
    // A copy imports only what its primary holds (catchUp): rows of its own would put it ahead of the record.
    if (this.replica)
      throw new Error('a copy of a PostgreSQL tenant takes rows from its store only; import into the store');
    this.group.flush();
    const stored = this.db
      .transaction(() => {
        assertAnchored(this.db);
        const events = importRows(this.db, rows, this.clock().toISOString());
        this.projections.apply(this.db, events);
        const first = events[0];
        if (first) this.projections.markApplied(this.db, first.position - 1, events[events.length - 1]!.position);
        return events;
      })
      .immediate();
    this.bus.publish(stored);
    return stored;
  }

  /**
   * On a replica: brings in what the primary committed after this copy's head, page by page, each in a
   * transaction of its own, and publishes it. Returns how many events came in.
   */
  catchUp(page = 5000): number {
    const replica = this.replica;
    if (!replica) return 0;
    this.group.flush();
    let count = 0;
    for (let rows = replica.rowsAfterHead(page); rows.length; rows = replica.rowsAfterHead(page)) {
      const events = this.db.transaction(() => replica.bringIn(rows)).immediate();
      this.bus.appended(events);
      this.bus.publish(events);
      count += events.length;
    }
    replica.bringCheckpoints();
    return count;
  }

  head(): ChainHead {
    return readHead(this.db);
  }

  /** The log's last position that is committed and on disk — where a reader of the log on this connection stops. */
  durableHead(): number {
    return this.group.durableHead(readHead(this.db).position);
  }

  verify(options?: VerifyOptions): VerifyResult {
    this.group.flush();
    return verifyChain(this.db, options);
  }

  /** What opening does to projections, for a caller that opened with skipStartupRebuild to check the log first. */
  ensureProjections(options: RebuildOptions = {}): RebuildReport | null {
    this.group.flush();
    return this.projections.ensureCurrent(this.db, { now: this.clock, ...options });
  }

  rebuild(names: readonly string[] = [], options: RebuildOptions = {}): RebuildReport {
    this.group.flush();
    return this.projections.rebuild(this.db, names, { now: this.clock, ...options });
  }

  /** Commits the open group-commit batch now and waits for its sync, e.g. before reading the log on another connection. */
  settle(): void {
    this.group.flush();
  }

  close(): void {
    if (this.db.open) this.group.close();
    this.bus.complete();
    if (this.db.open) this.db.close();
    this.replica?.primary.close();
    const onClose = this.onClose;
    this.onClose = undefined;
    onClose?.();
  }
}
