/**
 * SQLite-flavoured projection SQL, rewritten for PostgreSQL. Projections are written once in the SQL both
 * engines share (engine/projection-sql.ts); what differs only in spelling is rewritten here, and anything
 * else must be written per dialect — the rewrite refuses it by name rather than guess:
 *
 * - `?` and `@name` placeholders become `$1, $2…` (a named one keeps its number where it repeats);
 * - `INSERT OR IGNORE INTO …` becomes `INSERT INTO … ON CONFLICT DO NOTHING`;
 * - scalar `max(a, b)` / `min(a, b)` become `GREATEST` / `LEAST` (one-argument max/min stay aggregates);
 * - column types: `INTEGER` → `BIGINT` (ids, tokens and cents can pass 2^31), `REAL` → `DOUBLE PRECISION`,
 *   `BLOB` → `BYTEA`; `WITHOUT ROWID` is dropped (every PostgreSQL table is heap + index);
 * - a camelCase alias (`AS streamId`) is quoted, or PostgreSQL would fold it to lower case.
 *
 * String literals and quoted identifiers are copied untouched. Refused: `INSERT OR REPLACE` (needs a
 * conflict target), `CREATE VIRTUAL TABLE` (FTS5), `json_*` functions and `strftime`.
 */
export interface PgStatement {
  readonly text: string;
  /** For `@name` placeholders: the name behind each `$n`, in order. */
  readonly names: readonly string[] | null;
}

const cache = new Map<string, PgStatement>();

export function toPostgres(sql: string): PgStatement {
  let statement = cache.get(sql);
  if (!statement) {
    statement = translate(sql);
    cache.set(sql, statement);
  }
  return statement;
}

const REFUSED: readonly [RegExp, string][] = [
  [/\bINSERT\s+OR\s+REPLACE\b/i, 'INSERT OR REPLACE (write an ON CONFLICT … DO UPDATE)'],
  [/\bCREATE\s+VIRTUAL\s+TABLE\b/i, 'CREATE VIRTUAL TABLE (full-text search is written per dialect)'],
  [/\bjson_\w+\s*\(|\bjson\s*\(/i, 'SQLite JSON functions'],
  [/\bstrftime\s*\(/i, 'strftime'],
];

function translate(sql: string): PgStatement {
  const parts = split(sql);
  const code = parts
    .filter((p) => p.code)
    .map((p) => p.text)
    .join(' ');
  for (const [pattern, what] of REFUSED) {
    if (pattern.test(code))
      throw new Error(`SQL for PostgreSQL uses ${what}; write it per dialect: ${sql.slice(0, 120)}`);
  }
  let positional = 0;
  const names: string[] = [];
  let ignore = false;
  const out = parts.map((part) => {
    if (!part.code) return part.text;
    let text = part.text
      .replace(/\bINSERT\s+OR\s+IGNORE\s+INTO\b/gi, () => {
        ignore = true;
        return 'INSERT INTO';
      })
      .replace(/\bWITHOUT\s+ROWID\b/gi, '')
      .replace(/\bINTEGER\b/g, 'BIGINT')
      .replace(/\bREAL\b/g, 'DOUBLE PRECISION')
      .replace(/\bBLOB\b/g, 'BYTEA')
      .replace(/\bAS\s+([a-z]\w*[A-Z]\w*)\b/g, 'AS "$1"');
    text = text.replace(/\?|@([A-Za-z_]\w*)/g, (_m, name: string | undefined) => {
      if (name === undefined) return `$${++positional}`;
      const at = names.indexOf(name);
      if (at >= 0) return `$${at + 1}`;
      names.push(name);
      return `$${names.length}`;
    });
    return text;
  });
  if (positional > 0 && names.length > 0) throw new Error(`SQL mixes ? and @name placeholders: ${sql.slice(0, 120)}`);
  let text = scalarMinMax(out.join(''));
  if (ignore) text = `${text.trimEnd().replace(/;$/, '')} ON CONFLICT DO NOTHING`;
  return { text, names: names.length ? names : null };
}

/** The SQL cut into code and quoted runs ('…' literals, "…" identifiers), so rewrites skip the quoted. */
function split(sql: string): { code: boolean; text: string }[] {
  const parts: { code: boolean; text: string }[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      if (i > start) parts.push({ code: true, text: sql.slice(start, i) });
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) throw new Error(`unterminated ${c} in SQL: ${sql.slice(0, 120)}`);
        if (sql[j] === c) {
          if (sql[j + 1] === c) j += 2;
          else break;
        } else j++;
      }
      parts.push({ code: false, text: sql.slice(i, j + 1) });
      start = i = j + 1;
    } else i++;
  }
  if (start < sql.length) parts.push({ code: true, text: sql.slice(start) });
  return parts;
}

/** `max(a, b)` → `GREATEST(a, b)`: a max/min whose parentheses hold a top-level comma is the scalar one. */
function scalarMinMax(sql: string): string {
  const quoted: [number, number][] = [];
  let at = 0;
  for (const part of split(sql)) {
    if (!part.code) quoted.push([at, at + part.text.length]);
    at += part.text.length;
  }
  return sql.replace(/\b(max|min)\s*\(/gi, (match, fn: string, offset: number) => {
    if (quoted.some(([from, to]) => offset >= from && offset < to)) return match;
    let depth = 0;
    let quote: string | null = null;
    for (let i = offset + match.length; i < sql.length; i++) {
      const c = sql[i]!;
      if (quote) {
        if (c === quote) quote = null;
      } else if (c === "'" || c === '"') quote = c;
      else if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) break;
        depth--;
      } else if (c === ',' && depth === 0) return fn.toLowerCase() === 'max' ? 'GREATEST(' : 'LEAST(';
    }
    return match;
  });
}
