import type pg from 'pg';
import { streamSequence } from '../event.js';
import { checkSequences, type SequenceClaims } from '../store-port.js';
import { int } from './connect.js';

/** Each tenant's id high-water marks per kind (`es_sequences`), as on SQLite (engine/ids.ts). */
export async function readSequences(client: pg.ClientBase | pg.Pool, tenant: string): Promise<Map<string, number>> {
  const rows = await client.query<{ name: string; value: string }>(
    'SELECT name, value FROM es_sequences WHERE tenant = $1',
    [tenant],
  );
  return new Map(rows.rows.map((r) => [r.name, int(r.value)]));
}

/** Under the tenant's lock: the marks the decision read are still there, and move on. */
export async function claimSequences(client: pg.ClientBase, tenant: string, claims: SequenceClaims): Promise<void> {
  const kinds = Object.keys(claims);
  if (kinds.length === 0) return;
  checkSequences(claims, await readSequences(client, tenant));
  await client.query(
    `INSERT INTO es_sequences (tenant, name, value) SELECT $1, * FROM unnest($2::text[], $3::bigint[])
     ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value`,
    [tenant, kinds, kinds.map((k) => claims[k]!.to)],
  );
}

/**
 * Raises marks to at least the given values (never lowers one): after an import, to the highest
 * `<kind>-<n>` stream of the rows, and to the SQLite log's own marks when a team moves here.
 */
export async function raiseSequences(client: pg.ClientBase, tenant: string, marks: ReadonlyMap<string, number>) {
  if (marks.size === 0) return;
  await client.query({
    name: 'colony_raise_sequences',
    text: `INSERT INTO es_sequences (tenant, name, value) SELECT $1, * FROM unnest($2::text[], $3::bigint[])
     ON CONFLICT (tenant, name) DO UPDATE SET value = GREATEST(es_sequences.value, excluded.value)`,
    values: [tenant, [...marks.keys()], [...marks.values()]],
  });
}

/** The highest id per kind among stream names `<kind>-<n>`. */
export function streamMarks(streamIds: Iterable<string>): Map<string, number> {
  const marks = new Map<string, number>();
  for (const streamId of streamIds) {
    const named = streamSequence(streamId);
    if (named) marks.set(named.kind, Math.max(marks.get(named.kind) ?? 0, named.id));
  }
  return marks;
}
