import pg from 'pg';

/**
 * Statements with their values written in, for a write sent as one simple-query string (pg/one-trip.ts):
 * the simple protocol has no parameters. Every value becomes a quoted, untyped literal ('…', escaped by
 * the driver's escapeLiteral) or NULL, which PostgreSQL types from context exactly as it types the
 * extended protocol's untyped text parameters — the same text the driver would have sent for `$n`. Arrays
 * are written as the driver writes them (`{"…",NULL}`), bytes as `'\x…'`. Nothing else is ever spliced
 * into SQL: the values may be agents' text.
 */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  return pg.escapeLiteral(text(value));
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  if (Array.isArray(value)) return `{${value.map(element).join(',')}}`;
  throw new Error(`no literal for a value of type ${typeof value}`);
}

function element(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  return `"${text(value).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * `$1…$n` in a statement replaced by the values' literals. Quoted runs ('…' literals, "…" identifiers)
 * are copied untouched, so a `$2` inside one stays text.
 */
export function inline(sql: string, values: readonly unknown[]): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (/[0-9]/.test(sql[j] ?? '')) j++;
      const n = Number(sql.slice(i + 1, j));
      if (n < 1 || n > values.length) throw new Error(`no value for $${n} in ${sql.slice(0, 120)}`);
      out += literal(values[n - 1]);
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
