import { hash } from 'node:crypto';
import type { EventRow } from './event.js';

/**
 * The hash chain — each event's hash covers the previous one's, so a changed event breaks every hash after it:
 *   hash = sha256_hex( prev_hash ‖ RFC 8785 canonical JSON of the row without its hash )
 * where "the row" is the object {data, meta, position, prevHash, recordedAt, schemaVersion, streamId,
 * type, version} and ‖ is string concatenation of the 64-char lowercase hex prev_hash and the JSON text.
 *
 * `data` and `meta` are stored as canonical JSON already, so the canonical row is built by concatenating
 * the members in RFC 8785 key order (UTF-16 code-unit order) — no re-parsing, which keeps verification
 * fast. RFC 8785 serializes strings exactly as ECMAScript's JSON.stringify does. An auditor can recompute
 * it with any RFC 8785 implementation: `canonicalize({...row, data: JSON.parse(data), meta: JSON.parse(meta)})`.
 */
export const GENESIS_HASH = '0'.repeat(64);

type HashedFields = Omit<EventRow, 'hash'>;

export function canonicalRow(row: HashedFields): string {
  return (
    `{"data":${row.data},"meta":${row.meta},"position":${row.position},` +
    `"prevHash":${JSON.stringify(row.prev_hash)},"recordedAt":${JSON.stringify(row.recorded_at)},` +
    `"schemaVersion":${row.schema_version},"streamId":${JSON.stringify(row.stream_id)},` +
    `"type":${JSON.stringify(row.type)},"version":${row.version}}`
  );
}

export function rowHash(row: HashedFields): string {
  return hash('sha256', row.prev_hash + canonicalRow(row), 'hex');
}
