import pg from 'pg';
import { sqlOf, type SqlParam, type SqlStep, type Steps } from '../projection-sql.js';
import { toPostgres } from './dialect.js';

/**
 * Answers a projection's steps (engine/projection-sql.ts) on PostgreSQL, on the connection of the
 * transaction that appended the events. Each statement is a named prepared statement on its
 * connection, parsed once per connection, as better-sqlite3's statement cache does on SQLite.
 */
export async function applyStepsPg<R>(client: pg.ClientBase, steps: Steps<R>): Promise<R> {
  let next = steps.next();
  while (!next.done) {
    const step = next.value;
    const statement = toPostgres(sqlOf(step.sql, 'postgres'));
    const result = await client
      .query({
        name: statementName(statement.text),
        text: statement.text,
        values: stepValues(step, statement.names),
        types: READ_MODEL_TYPES,
      })
      .catch((e: Error) => {
        // Name the statement: a projection's SQL that PostgreSQL refuses is a bug to find fast.
        throw new Error(`${e.message} (in ${statement.text.replace(/\s+/g, ' ').slice(0, 160)})`, { cause: e });
      });
    let answer: unknown;
    if (step.op === 'run') answer = { changes: result.rowCount ?? 0 };
    else if (step.op === 'get') answer = result.rows[0];
    else answer = result.rows;
    next = steps.next(answer);
  }
  return next.value;
}

const names = new Map<string, string>();
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `colony_rm_${names.size}`;
    names.set(text, name);
  }
  return name;
}

/** A step's values in the order of its PostgreSQL statement's `$n`. */
export function stepValues(step: SqlStep, named: readonly string[] | null): unknown[] {
  if (!named) return (step.params as readonly SqlParam[]).map(pgValue);
  const bag = step.params[0] as Readonly<Record<string, SqlParam>>;
  return named.map((n) => {
    if (!(n in bag)) throw new Error(`no value for @${n} in ${statementText(step)}`);
    return pgValue(bag[n]!);
  });
}

const statementText = (step: SqlStep): string => sqlOf(step.sql, 'postgres').slice(0, 120);

/**
 * PostgreSQL text cannot hold U+0000 and SQLite's can; agents write the text, so a NUL in it must not
 * fail the append on one store and pass on the other. It is stored as U+FFFD in read models; the log
 * keeps the exact text (its JSON escapes the NUL).
 */
function pgValue(value: SqlParam): unknown {
  return typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

/**
 * Read models hold counts and sums that stay far below 2^53: bigint and numeric arrive as numbers, as
 * SQLite's integers do, so one projection's reads work on both.
 */
export const READ_MODEL_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};
