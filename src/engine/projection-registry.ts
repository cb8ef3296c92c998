import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { applySteps, type OnRun, type SqlStep } from './projection-sql.js';
import { DomainError } from '../errors.js';
import type { StoredEvent } from './event.js';
import { readHead } from './store.js';
import { PositionWriter, positionsSql } from './projection-positions.js';
import { handlesType, liveNames, type AnyProjection, type TableNames } from './projection.js';
import { catchUpProjection, rebuildProjections, type RebuildOptions, type RebuildReport } from './rebuild.js';

export interface ProjectionStatus {
  name: string;
  codeVersion: number;
  storedVersion: number | null;
  position: number;
  /** It missed events appended by a process that did not have it: rebuilt on the next start. */
  stale: boolean;
}

/**
 * The projections of the running code. Applies them inline in the append transaction, records the
 * position they reached, and on start brings each up to date: rebuilt when its code version differs
 * from the stored one (or it is new), caught up when it lags the log (events appended by a process that
 * did not have it).
 */
export class ProjectionRegistry {
  private readonly byType = new Map<string, readonly AnyProjection[]>();
  private readonly live = new Map<AnyProjection, TableNames<string>>();
  private readonly positions: PositionWriter;

  constructor(readonly projections: readonly AnyProjection[]) {
    const names = new Set<string>();
    const tables = new Set<string>();
    for (const p of projections) {
      if (names.has(p.name)) throw new Error(`two projections are named ${p.name}`);
      if (p.name.startsWith('$')) throw new Error(`projection names may not start with $ (reserved): ${p.name}`);
      names.add(p.name);
      for (const t of p.tables) {
        if (tables.has(t)) throw new Error(`table ${t} is owned by two projections`);
        tables.add(t);
      }
      this.live.set(p, liveNames(p));
    }
    this.positions = new PositionWriter([...names]);
  }

  get(name: string): AnyProjection | undefined {
    return this.projections.find((p) => p.name === name);
  }

  private forType(type: string): readonly AnyProjection[] {
    let list = this.byType.get(type);
    if (!list) {
      list = this.projections.filter((p) => handlesType(p, type));
      this.byType.set(type, list);
    }
    return list;
  }

  /**
   * While set, told of every event applied and each write its projections made (a node's copy records
   * them for its primary, which repeats them instead of running the projections again: replica.ts).
   */
  recorder: { event(position: number): void; write: OnRun } | null = null;

  /**
   * Applies events to the live tables. Runs inside the append transaction. `held`: where writes that may
   * wait for the end of the batch go (projection-sql.ts `later`); a copy that records its writes runs them
   * at once, in event order, for its primary to repeat.
   */
  apply(db: Database, events: readonly StoredEvent[], held: SqlStep[] | null = null): void {
    const recorder = this.recorder;
    const hold = recorder ? null : held;
    for (const event of events) {
      recorder?.event(event.position);
      for (const p of this.forType(event.type))
        applySteps(db, p.apply(event, this.live.get(p)!), recorder?.write, hold);
    }
  }

  /** Records that the registered projections applied the events after `previous` up to `last` (projection-positions.ts). */
  markApplied(db: Database, previous: number, last: number): void {
    this.positions.advance(db, previous, last);
  }

  status(db: Database): ProjectionStatus[] {
    const stored = prepared(db, positionsSql(db)).all() as {
      name: string;
      version: number;
      position: number;
      stale: number;
    }[];
    return this.projections.map((p) => {
      const row = stored.find((s) => s.name === p.name);
      return {
        name: p.name,
        codeVersion: p.version,
        storedVersion: row?.version ?? null,
        position: row?.position ?? 0,
        stale: row?.stale === 1,
      };
    });
  }

  /** Brings every projection up to date with the code and the log. Returns what was rebuilt. */
  ensureCurrent(db: Database, options: RebuildOptions = {}): RebuildReport | null {
    const status = this.status(db);
    const outdated = this.projections.filter((p) => {
      const s = status.find((x) => x.name === p.name);
      return !s || s.storedVersion !== p.version || s.stale;
    });
    const head = readHead(db).position;
    for (const s of status) {
      const p = this.get(s.name)!;
      if (!outdated.includes(p) && s.position < head) catchUpProjection(db, p, this.live.get(p)!, s.position);
    }
    return outdated.length > 0 ? rebuildProjections(db, outdated, options) : null;
  }

  /** Rebuilds the named projections (all when no names are given) from the log. */
  rebuild(db: Database, names: readonly string[] = [], options: RebuildOptions = {}): RebuildReport {
    const chosen = names.length === 0 ? this.projections : names.map((n) => this.require(n));
    return rebuildProjections(db, chosen, options);
  }

  private require(name: string): AnyProjection {
    const p = this.get(name);
    if (!p) {
      const known = this.projections.map((x) => x.name).join(', ') || 'none';
      throw new DomainError('ErrNotFound', `unknown projection "${name}" (known: ${known})`, { projection: name });
    }
    return p;
  }
}
