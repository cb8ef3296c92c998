import type pg from 'pg';
import { DomainError } from '../../errors.js';
import type { Clock } from '../../clock.js';
import type { EventMeta, EventRow } from '../event.js';
import type { CommandOptions, TransactResult } from '../handle.js';
import { decisionIds } from '../handle-store.js';
import { newCommandId } from '../ids.js';
import { oneStep } from '../projection-sql.js';
import { chainRows, draftAppend, toStoredEvent } from '../store.js';
import { metaOf, type TenantEvent } from '../store-port.js';
import { driveUnitAsync, type Decided, type Unit } from '../unit-of-work.js';
import { eventsOf, readChain } from './chain.js';
import { inTransaction } from './connect.js';
import { applyStepsPg } from './projection-driver.js';
import type { PgReadModels } from './projections.js';
import { insertRows, readStreamOf } from './rows.js';
import { claimSequences, readSequences } from './sequences.js';

/**
 * A unit of work (engine/unit-of-work.ts) on PostgreSQL: one transaction that takes the tenant's chain
 * lock in its BEGIN, with the tenant's read models on its search_path. Its facts are read and its
 * commands decided and appended under that lock, so no other node's append to the tenant comes between
 * a fact and the decision on it — as BEGIN IMMEDIATE gives a SQLite file — and nothing needs a retry.
 * Its command id, when given, covers every event it appends: a retry answers with them.
 */
export interface PgUnitContext {
  pool: pg.Pool;
  clock: Clock;
  readModels: PgReadModels;
  /** The BEGIN that takes the tenant's chain lock and sets its search_path. */
  begin(tenant: string): string;
}

export async function runPgUnit<R>(
  ctx: PgUnitContext,
  tenant: string,
  options: CommandOptions,
  unit: () => Unit<R>,
): Promise<TransactResult<R>> {
  await ctx.readModels.prepare(ctx.pool, tenant);
  const commandId = options.record === false ? null : (options.commandId ?? null);
  return inTransaction(
    ctx.pool,
    async (client) => {
      const chain = await readChain(client, tenant, null, commandId);
      if (chain.command)
        return { events: await eventsOf(client, tenant, chain.command), value: undefined, duplicate: true };
      if (commandId !== null && options.idempotencyScope !== undefined)
        await checkScope(client, tenant, options.idempotencyScope, commandId);
      let head = chain.head;
      const meta = metaOf(
        { ...options, tenant, streamId: '', expected: 'any', events: [] },
        options.commandId ?? newCommandId(),
      );
      const at = ctx.clock().toISOString();
      const appended: TenantEvent[] = [];
      const value = await driveUnitAsync(unit(), async (step) => {
        if (step.op === 'id') return takeId(client, tenant, step.kind);
        if (step.op !== 'decide') return applyStepsPg(client, oneStep(step));
        const history = await readStreamOf(client, tenant, step.streamId);
        const { decider } = step;
        const state = history.reduce((s, e) => decider.evolve(s, e), decider.initialState());
        const version = history[history.length - 1]?.version ?? 0;
        const ids = decisionIds(await readSequences(client, tenant));
        const decided = decider.decide(step.command, state, { now: at, actor: options.actor, ids });
        if (decided.length === 0) return { events: [], state, version } satisfies Decided<unknown, never>;
        const rows = chainRows(head, draftAppend(step.streamId, decided), version, meta, at);
        await claimSequences(client, tenant, ids.claims);
        const events = await writeRows(client, ctx.readModels, tenant, rows, meta, null);
        const last = rows[rows.length - 1]!;
        head = { position: last.position, hash: last.hash };
        appended.push(...events);
        return {
          events,
          state: events.reduce((s, e) => decider.evolve(s, e), state),
          version: version + events.length,
        };
      });
      if (commandId !== null)
        await client.query(
          'INSERT INTO es_commands (tenant, command_id, first_position, last_position, committed_at) VALUES ($1, $2, $3, $4, $5)',
          [tenant, commandId, appended[0]?.position ?? null, appended[appended.length - 1]?.position ?? null, at],
        );
      return { events: appended, value, duplicate: false };
    },
    ctx.begin(tenant),
  );
}

/** As on SQLite (handle.ts): another command recorded under the key's scope is the same key with other arguments. */
async function checkScope(client: pg.ClientBase, tenant: string, scope: string, commandId: string): Promise<void> {
  const other = await client.query<{ id: string }>(
    `SELECT command_id AS id FROM es_commands WHERE tenant = $1 AND command_id > $2 AND command_id < $3 LIMIT 1`,
    [tenant, scope, `${scope}~`],
  );
  const id = other.rows[0]?.id;
  if (id !== undefined && id !== commandId)
    throw new DomainError(
      'ErrIdempotencyConflict',
      'this idempotency key was already used with different arguments: use a new key for a different request',
      { scope },
    );
}

/** The tenant's next id of a kind, claimed at once (the unit holds the tenant's lock, so nobody races it). */
async function takeId(client: pg.ClientBase, tenant: string, kind: string): Promise<number> {
  const current = (await readSequences(client, tenant)).get(kind) ?? 0;
  await claimSequences(client, tenant, { [kind]: { from: current, to: current + 1 } });
  return current + 1;
}

/** Inserts chained rows of the tenant, applies them to its read models, and returns them as its events. */
export async function writeRows(
  client: pg.ClientBase,
  readModels: PgReadModels,
  tenant: string,
  rows: readonly EventRow[],
  meta: EventMeta,
  command: { id: string; at: string } | null,
): Promise<TenantEvent[]> {
  const order = await insertRows(client, tenant, rows, command);
  const events = rows.map((r) => ({ ...toStoredEvent(r, meta), tenant, cursor: order.get(r.position)! }));
  await readModels.apply(client, events);
  return events;
}
