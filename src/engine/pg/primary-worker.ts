import { workerData, type MessagePort } from 'node:worker_threads';
import { DomainError } from '../../errors.js';
import type { AnyProjection } from '../projection.js';
import type { ChainHead } from '../store.js';
import type { CheckpointRecord, CommandRecord, PrimaryState, PrimaryWrite } from '../replica.js';
import type { Expectation } from '../replica-record.js';
import { chainKey, readChain } from './chain.js';
import { checkCopy, lockedState } from './locked-state.js';
import { checkContinues } from './commit-rows.js';
import { expectSql, sendOneTrip } from './one-trip.js';
import { ignore, lockedBegin, release, unlockedBegin, wire, type Held } from './primary-connection.js';
import { checkWhole, readWholeTenantRows } from './rows.js';
import { PgEventStore } from './store.js';
import type { SyncReply, SyncRequest } from './sync-worker.js';

/**
 * The worker thread behind a PostgreSQL primary (pg/primary.ts): it holds the node's connections to the
 * store and answers the replica's synchronous calls (sync-worker.ts) one at a time. Between `lock` and
 * `commit` (or `rollback`) it keeps one connection in a transaction that holds the tenant's chain lock;
 * `write` takes the lock, writes and commits in one round trip (pg/one-trip.ts).
 */

export function servePrimary(projections: readonly AnyProjection[]): void {
  const { port, flag } = workerData as { port: MessagePort; flag: SharedArrayBuffer };
  const signal = new Int32Array(flag);
  const host = new PrimaryHost(projections);
  let pending: number | null = null;
  const reply = (message: SyncReply) => {
    if (pending !== message.id) return;
    pending = null;
    port.postMessage(message);
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  port.on('message', (request: SyncRequest) => {
    pending = request.id;
    void host.answer(request).then(reply);
  });
  // Whatever goes wrong, the caller blocked on the flag gets an answer — never a 30 s wait for a dead thread.
  process.on('uncaughtException', (e) => {
    if (pending !== null) reply({ id: pending, error: wire(e) });
  });
}

class PrimaryHost {
  private store: PgEventStore | null = null;
  private tenant = '';
  private held: Held | null = null;
  /** For `colony bench`: writes, how many lost a race, and how long this node held the tenant's lock (an upper bound, ms). */
  private readonly stats = { writes: 0, optimistic: 0, conflicts: 0, fallbacks: 0, heldMs: 0 };
  private lockedAt = 0;

  constructor(private readonly projections: readonly AnyProjection[]) {}

  async answer({ id, op, args }: SyncRequest): Promise<SyncReply> {
    try {
      return { id, value: await this.run(op, args as never) };
    } catch (e) {
      return { id, error: wire(e) };
    }
  }

  private run(op: string, args: never): Promise<unknown> {
    switch (op) {
      case 'open':
        return this.open(args);
      case 'lock':
        return this.lock(args);
      case 'commit':
        return this.commit(args);
      case 'write':
        return this.write(args);
      case 'stats':
        return Promise.resolve({ ...this.stats });
      case 'rollback':
        return this.rollback();
      case 'rows':
        return this.rows(args);
      case 'commands':
        return this.commands(args);
      case 'checkpoints':
        return this.checkpoints(args);
      case 'saveCheckpoint':
        return this.saveCheckpoint(args);
      default:
        throw new Error(`no operation ${op}`);
    }
  }

  private async open(args: { url: string; tenant: string }): Promise<null> {
    // This node's tenant only: other tenants' read models are their nodes' business.
    this.store = await PgEventStore.open(args.url, {
      projections: this.projections,
      poolSize: 3,
      skipStartupRebuild: true,
    });
    this.tenant = args.tenant;
    await this.store.readModels.prepare(this.store.pool, this.tenant);
    return null;
  }

  private async lock(args: { after: ChainHead }): Promise<PrimaryState> {
    if (this.held) await release(this.held, true);
    this.held = null;
    const { store, tenant } = this;
    const client = await store!.pool.connect();
    this.lockedAt = performance.now();
    // A connection lost while it holds the lock (a restart, a failover, the idle timeout) fails the
    // write that uses it next; unheard, its 'error' would end this thread. Removed again on release.
    client.on('error', ignore);
    try {
      await client.query(lockedBegin(store!, tenant));
      let state = await lockedState(client, tenant, args.after);
      if (!state.head) {
        // The tenant's first write ever: its head row is made (under the lock), then read as any other.
        await readChain(client, tenant, null, null);
        state = await lockedState(client, tenant, args.after);
      }
      const head = state.head!;
      checkCopy(tenant, head, args.after, state.copyHash);
      // What other nodes committed must reach the head it moved: else rows were removed behind the store's back.
      checkWhole(tenant, state.rows, args.after.position, head.position);
      await store!.readModels.checkEpoch(client, tenant, state.epoch);
      this.held = { client, head };
      return { rows: state.rows, sequences: state.sequences };
    } catch (e) {
      await release({ client, head: args.after }, true);
      throw e;
    }
  }

  private async commit(write: PrimaryWrite): Promise<null> {
    const h = this.held;
    if (!h) throw new Error('commit without the lock');
    this.held = null;
    const { store, tenant } = this;
    try {
      checkContinues(tenant, h.head, write.rows);
      if (!(await sendOneTrip({ client: h.client, tenant, readModels: store!.readModels, write }, null)))
        this.stats.fallbacks++;
    } catch (e) {
      await release(h, true);
      throw e;
    } finally {
      this.stats.writes++;
      this.stats.heldMs += performance.now() - this.lockedAt;
    }
    h.client.off('error', ignore);
    h.client.release();
    return null;
  }

  /** An optimistic write: the lock, the checks, the rows, the read models and COMMIT in one round trip. */
  private async write({ expect, write }: { expect: Expectation; write: PrimaryWrite }): Promise<null> {
    if (this.held) await release(this.held, true);
    this.held = null;
    const { store, tenant } = this;
    const client = await store!.pool.connect();
    client.on('error', ignore);
    const h = { client, head: expect.head };
    const started = performance.now();
    try {
      checkContinues(tenant, expect.head, write.rows);
      const key = chainKey(store!.target.schema, tenant);
      const epoch = store!.readModels.epochOf(tenant);
      const before = expectSql(unlockedBegin(store!, tenant), tenant, key, expect, epoch);
      if (!(await sendOneTrip({ client, tenant, readModels: store!.readModels, write }, before)))
        this.stats.fallbacks++;
    } catch (e) {
      if ((e as { code?: string }).code === 'ErrWriteConflict') this.stats.conflicts++;
      await release(h, true);
      throw e;
    } finally {
      this.stats.writes++;
      this.stats.optimistic++;
      this.stats.heldMs += performance.now() - started;
    }
    client.off('error', ignore);
    client.release();
    return null;
  }

  private async rollback(): Promise<null> {
    const h = this.held;
    this.held = null;
    if (h) await release(h, true);
    return null;
  }

  /** Under the lock, on its connection: the commands recorded under an id or an idempotency key's scope. */
  private async commands(args: { prefix: string }): Promise<CommandRecord[]> {
    if (!this.held) throw new Error('commands without the lock');
    // As on SQLite (command-log.ts commandUnder): ids continue in hex after a scope, and '~' sorts after them.
    const result = await this.held.client.query<CommandRecord>(
      `SELECT command_id, first_position::int AS first_position, last_position::int AS last_position, committed_at
         FROM es_commands WHERE tenant = $1 AND command_id >= $2 AND command_id < $3 ORDER BY command_id LIMIT 10`,
      [this.tenant, args.prefix, `${args.prefix}~`],
    );
    return result.rows;
  }

  private async checkpoints(args: { after: number }): Promise<CheckpointRecord[]> {
    const result = await this.store!.pool.query<CheckpointRecord>(
      `SELECT n::int AS n, tree_size::int AS tree_size, key_id, body, signature, public_key, reason
         FROM es_checkpoints WHERE tenant = $1 AND n > $2 ORDER BY n`,
      [this.tenant, args.after],
    );
    return result.rows;
  }

  /** A checkpoint a node signed; a number another node took first is ErrConcurrency (sign again). */
  private async saveCheckpoint(c: CheckpointRecord): Promise<null> {
    const result = await this.store!.pool.query(
      `INSERT INTO es_checkpoints (tenant, n, tree_size, key_id, body, signature, public_key, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
      [this.tenant, c.n, c.tree_size, c.key_id, c.body, c.signature, c.public_key, c.reason],
    );
    if (result.rowCount === 0)
      throw new DomainError('ErrConcurrency', `another node signed checkpoint #${c.n} first: sign again`, { n: c.n });
    return null;
  }

  private rows(args: { after: number; limit: number }) {
    return readWholeTenantRows(this.store!.pool, this.tenant, args.after, args.limit);
  }
}
