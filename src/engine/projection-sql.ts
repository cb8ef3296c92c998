import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';

/**
 * How a projection speaks SQL to either store with one definition. Its `apply` is a generator that
 * yields statements (`yield run(sql, …)`, `const row = yield* get<Row>(sql, …)`) instead of calling a
 * driver: on SQLite `applySteps` answers each step synchronously inside the append's better-sqlite3
 * transaction (no await, so nothing can interleave), on PostgreSQL `pg/projection-driver.ts` answers the
 * same steps with awaited queries on the append's connection. The SQL is written once in the subset both
 * engines share; `pg/dialect.ts` rewrites the few spellings that differ (placeholders, INSERT OR IGNORE,
 * two-argument max/min, column types). Where a statement cannot be shared (full-text search, JSON
 * arrays) it is written twice, as `{ sqlite, postgres }`.
 */
export type Dialect = 'sqlite' | 'postgres';

/** One statement, or one per dialect where they cannot be shared. */
export type DialectSql = string | { readonly sqlite: string; readonly postgres: string };

export type SqlParam = string | number | bigint | null | Buffer;
/** Positional values, or one object of named ones for `@name` placeholders. */
export type SqlParams = readonly SqlParam[] | readonly [Readonly<Record<string, SqlParam>>];

export interface SqlStep {
  readonly op: 'run' | 'get' | 'all';
  readonly sql: DialectSql;
  readonly params: SqlParams;
  /** A write that may be held to the end of its group-commit batch (`later`). */
  readonly later?: true;
}

/** What a `run` step answers: the rows it changed. */
export interface RunResult {
  readonly changes: number;
}

/**
 * The steps of one apply; the value sent back into each `yield` is the step's answer, whose type only
 * the step knows: `const r: RunResult = yield run(…)`, or `yield* get<Row>(…)` for a typed read.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Steps<R = void> = Generator<SqlStep, R, any>;

export function sqlOf(sql: DialectSql, dialect: Dialect): string {
  return typeof sql === 'string' ? sql : sql[dialect];
}

/**
 * A write: `yield run(sql, …)`, answered with a RunResult (how many rows it changed). A plain step, not a
 * generator like get/all: a rebuild yields one per event and projection, and a generator each would
 * cost it a fifth of its speed.
 */
export function run(sql: DialectSql, ...params: SqlParams): SqlStep {
  return { op: 'run', sql, params };
}

/**
 * A write that may wait for the end of its group-commit batch (group-commit.ts), for a table no step of
 * the batch reads back; its projection must not read the answer (a held step gets none). Why: FTS5 writes
 * what it holds in memory to disk as a new index segment at every SAVEPOINT, and every command of a batch
 * is one — held to the batch's end, before its COMMIT, a batch's index writes make one segment, not one
 * per command. Outside a batch, on a node's copy and on PostgreSQL it runs at once, like `run`.
 */
export function later(sql: DialectSql, ...params: SqlParams): SqlStep {
  return { op: 'run', sql, params, later: true };
}

/** The first row, or undefined. */
export function* get<Row>(sql: DialectSql, ...params: SqlParams): Steps<Row | undefined> {
  return (yield { op: 'get', sql, params }) as Row | undefined;
}

/** Every row. */
export function* all<Row>(sql: DialectSql, ...params: SqlParams): Steps<Row[]> {
  return (yield { op: 'all', sql, params }) as Row[];
}

/** Told each write a step made and the rows it changed (a node records them for its primary: replica.ts). */
export type OnRun = (step: SqlStep, changes: number) => void;

/**
 * Answers the steps on SQLite, synchronously: call it inside the append's transaction. `held`: where
 * `later` steps go instead of running (the command's share of its batch's held writes: handle.ts).
 */
export function applySteps<R>(db: Database, steps: Steps<R>, onRun?: OnRun, held?: SqlStep[] | null): R {
  let next = steps.next();
  while (!next.done) {
    const step = next.value;
    if (step.later && held) {
      held.push(step);
      next = steps.next(undefined);
      continue;
    }
    const statement = prepared(db, sqlOf(step.sql, 'sqlite'));
    let answer: unknown;
    if (step.op === 'run') {
      const result = statement.run(...step.params);
      onRun?.(step, result.changes);
      answer = result;
    } else if (step.op === 'get') answer = statement.get(...step.params);
    else answer = statement.all(...step.params);
    next = steps.next(answer);
  }
  return next.value;
}

/** Runs held writes (`later`), in the order they were held: at the end of their batch, before its COMMIT. */
export function runHeld(db: Database, held: readonly SqlStep[]): void {
  for (const step of held) prepared(db, sqlOf(step.sql, 'sqlite')).run(...step.params);
}

/** One step as a generator of its own: a driver that answers whole generators answers a lone step too. */
export function* oneStep(step: SqlStep): Steps<unknown> {
  return yield step;
}
