import { canonicalize } from '../canonical.js';
import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { DomainError } from '../errors.js';
import { streamSequence, type EventMeta, type EventRow, type StoredEvent } from './event.js';
import { rowHash } from './hash.js';
import { insertRow, readAll, readHead, streamVersion, toStoredEvent } from './store.js';

/**
 * The record of committed commands (`es_commands`) and the restore path. A command id appears once;
 * its events are the contiguous positions first..last (none for a command that decided nothing).
 */
export interface CommittedCommand {
  firstPosition: number | null;
  lastPosition: number | null;
}

export function findCommand(db: Database, commandId: string): CommittedCommand | null {
  const row = prepared(
    db,
    'SELECT first_position AS firstPosition, last_position AS lastPosition FROM es_commands WHERE command_id = ?',
  ).get(commandId) as CommittedCommand | undefined;
  return row ?? null;
}

/** A recorded command id that starts with `prefix` (an idempotency key's scope), if any. */
export function commandUnder(db: Database, prefix: string): string | null {
  // Scopes end in ':' and ids continue in hex: '~' sorts after every character that can follow.
  const row = prepared(
    db,
    'SELECT command_id AS id FROM es_commands WHERE command_id > ? AND command_id < ? LIMIT 1',
  ).get(prefix, `${prefix}~`) as { id: string } | undefined;
  return row?.id ?? null;
}

export function recordCommand(db: Database, commandId: string, events: readonly StoredEvent[], at: string): void {
  prepared(
    db,
    'INSERT INTO es_commands (command_id, first_position, last_position, committed_at) VALUES (?, ?, ?, ?)',
  ).run(commandId, events[0]?.position ?? null, events[events.length - 1]?.position ?? null, at);
}

/** The events a committed command appended, in order; empty when it appended none or never committed. */
export function eventsOfCommand(db: Database, commandId: string): StoredEvent[] {
  const c = findCommand(db, commandId);
  if (!c || c.firstPosition === null || c.lastPosition === null) return [];
  return readAll(db, { after: c.firstPosition - 1, to: c.lastPosition, limit: c.lastPosition - c.firstPosition + 1 });
}

/**
 * Appends rows exactly as given — hashes, schema versions, meta and all — for restoring an exported
 * log or loading a golden fixture. Each row must continue the chain: the next position, a prev_hash
 * equal to the head's hash, canonical JSON in data and meta (what an RFC 8785 auditor recomputes), a
 * hash that matches, and the next version of its stream. It records the commands the rows carry and
 * raises the id sequences to the highest `<kind>-<n>` stream seen, so new ids never collide.
 * Runs inside the caller's transaction; the first bad row throws and nothing is kept.
 */
export function importRows(
  db: Database,
  rows: readonly EventRow[],
  at: string,
  /**
   * 'first': a command already recorded keeps its record — a node's copy of a store, whose rows were
   * checked when the store took them, and where one tool call's unrecorded id may carry the events of
   * two transactions. Default 'refuse': a restore or migration never records a command twice.
   */
  recorded: 'refuse' | 'first' = 'refuse',
): StoredEvent[] {
  if (!db.inTransaction) throw new Error('importRows must run inside a write transaction');
  let head = readHead(db);
  const commands = new Map<string, StoredEvent[]>();
  const stored = rows.map((row) => {
    const problem = importedRowProblem(row, head, streamVersion(db, row.stream_id));
    if (problem) throw new DomainError('ErrChainMismatch', problem, { position: row.position });
    insertRow(db, row);
    head = { position: row.position, hash: row.hash };
    const event = toStoredEvent(row);
    const group = commands.get(event.meta.commandId);
    if (group) group.push(event);
    else commands.set(event.meta.commandId, [event]);
    raiseSequence(db, row.stream_id);
    return event;
  });
  for (const [commandId, events] of commands) {
    if (recorded === 'first' && findCommand(db, commandId)) continue;
    if (findCommand(db, commandId))
      throw new DomainError('ErrChainMismatch', `command ${commandId} is already in the log`, { commandId });
    recordCommand(db, commandId, events, at);
  }
  return stored;
}

/** What is wrong with an imported row that should continue the chain at `head` (null: nothing); the same on every store. */
export function importedRowProblem(
  row: EventRow,
  head: { position: number; hash: string },
  streamVersion: number,
): string | null {
  if (row.position !== head.position + 1) return `position ${row.position} does not follow the head ${head.position}`;
  if (row.prev_hash !== head.hash) return `prev_hash of position ${row.position} does not match the head's hash`;
  if (!isCanonical(row.data) || !isCanonical(row.meta))
    return `data or meta of position ${row.position} is not canonical JSON`;
  if (!hasCommandMeta(row.meta)) return `meta of position ${row.position} has no commandId and actor`;
  if (rowHash(row) !== row.hash) return `hash of position ${row.position} does not match its content`;
  if (row.version !== streamVersion + 1) return `version ${row.version} of ${row.stream_id} is out of sequence`;
  return null;
}

function hasCommandMeta(json: string): boolean {
  const meta = JSON.parse(json) as Partial<EventMeta> | null;
  return typeof meta?.commandId === 'string' && meta.commandId !== '' && typeof meta.actor === 'string';
}

function isCanonical(json: string): boolean {
  try {
    return canonicalize(JSON.parse(json)) === json;
  } catch {
    return false;
  }
}

function raiseSequence(db: Database, streamId: string): void {
  const named = streamSequence(streamId);
  if (!named) return;
  prepared(
    db,
    `INSERT INTO es_sequences (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = MAX(value, excluded.value)`,
  ).run(named.kind, named.id);
}
