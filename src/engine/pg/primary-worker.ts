import type pg from 'pg';
import { workerData, type MessagePort } from 'node:worker_threads';
import { DomainError, isDomainError } from '../../errors.js';
import { log } from '../../log.js';
import type { AnyProjection } from '../projection.js';
import type { ChainHead } from '../store.js';
import type { CheckpointRecord, CommandRecord, PrimaryState, PrimaryWrite } from '../replica.js';
import { beginLocked, readChain } from './chain.js';
import { checkCopy, lockedState } from './locked-state.js';
import { commitRows } from './commit-rows.js';
import { readTenantRows } from './rows.js';
import { PgEventStore } from './store.js';
import type { SyncReply, SyncRequest, WireError } from './sync-worker.js';

/**
 * The worker thread behind a PostgreSQL primary (pg/primary.ts): it holds the node's connections to the
 * store and answers the replica's synchronous calls (sync-worker.ts) one at a time. Between `lock` and
 * `commit` (or `rollback`) it keeps one connection in a transaction that holds the tenant's chain lock.
 */
interface Held {
  client: pg.PoolClient;
  head: ChainHead;
}

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
      const events = await commitRows(h.client, tenant, h.head, write);
      await store!.readModels.apply(h.client, events);
      await h.client.query('COMMIT');
      h.client.off('error', ignore);
      h.client.release();
    } catch (e) {
      await release(h, true);
      throw e;
    }
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
    return readTenantRows(this.store!.pool, this.tenant, args.after, args.limit);
  }
}

/** The lock waits at most this long for another node's transaction on the tenant: then the command fails. */
const LOCK_TIMEOUT = '10s';
/**
 * A node cut off from the store while it holds the lock (a partition, a hung process) would hold it until
 * TCP gives up — hours. A batch holds it for milliseconds, so PostgreSQL ends a session idle in its
 * transaction this long, releasing the lock; that node's COMMIT then fails and its callers are told so.
 */
const IDLE_TIMEOUT = '15s';

function lockedBegin(store: PgEventStore, tenant: string): string {
  const limits = `SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'; SET LOCAL idle_in_transaction_session_timeout = '${IDLE_TIMEOUT}'`;
  return beginLocked(store.target.schema, tenant, store.readModels.searchPath(tenant), limits);
}

async function release(h: Held, rollback: boolean): Promise<void> {
  let broken: Error | undefined;
  if (rollback) await h.client.query('ROLLBACK').catch((e: Error) => (broken = e));
  h.client.off('error', ignore);
  h.client.release(broken);
}

const ignore = (): void => undefined;

function wire(e: unknown): WireError {
  if (isDomainError(e)) return { message: e.message, code: e.code, details: { ...(e.details ?? {}) } };
  const pgCode = (e as { code?: string }).code;
  if (pgCode === '55P03')
    return {
      message: `another node held the tenant's write lock for over ${LOCK_TIMEOUT}; try again`,
      code: 'ErrBusy',
    };
  // The driver's words may name the server (a refused connection): they go to the node's log, and the
  // caller — an agent, maybe — gets the SQLSTATE only.
  log.error({ err: e }, 'the PostgreSQL store failed');
  const state = typeof pgCode === 'string' && /^[0-9A-Z]{5}$/.test(pgCode) ? ` (SQLSTATE ${pgCode})` : '';
  return {
    message: `the store failed${state}; the node's log has the details; try again`,
    code: 'ErrStoreUnavailable',
  };
}
