/**
 * RFC 8785 (JSON Canonicalization Scheme): object keys sorted by UTF-16 code units, no whitespace, strings
 * and numbers serialized as ECMAScript's JSON.stringify does. Everything Colony hashes or signs goes
 * through this one function.
 *
 * It is not json-canonicalize's `canonicalize`: that library hands any object with a `toJSON` key to
 * JSON.stringify, unsorted — and here a `toJSON` key is data anyone can send (a message's metadata), which
 * would make a stored row that no other RFC 8785 implementation reproduces. A `toJSON` *function* (a Date)
 * is honoured as JSON.stringify honours it; undefined members are left out and undefined array items are
 * null, as JSON.stringify does; a non-finite number is an error (RFC 8785 §3.2.2.3).
 */
export function canonicalize(value: unknown): string {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return canonicalize((value as { toJSON(): unknown }).toJSON());
  }
  if (typeof value === 'number' && !Number.isFinite(value))
    throw new Error(`Non-finite number (${value}) is not permitted in JSON (RFC 8785 §3.2.2.3)`);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalize(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalize(record[k])}`);
  return `{${members.join(',')}}`;
}
