import type { EventRow } from '../event.js';
import type { CheckpointRecord, CommandRecord, Primary, PrimaryState, PrimaryWrite } from '../replica.js';
import type { Expectation } from '../replica-record.js';
import type { ChainHead } from '../store.js';
import { SyncWorker } from './sync-worker.js';

/**
 * One tenant of a PostgreSQL store as the primary of this node's replica (engine/replica.ts). The calls
 * are synchronous, answered by a worker thread (pg/primary-worker.ts, started from `entry`) that holds
 * the connections; the tenant's chain lock lives on one of them from `lock` until `commit` or `rollback`.
 */
export class PgPrimary implements Primary {
  private readonly worker: SyncWorker;
  readonly where: string;

  constructor(
    /** The worker's entry module: it calls servePrimary with the product's projections. */
    entry: URL,
    url: string,
    readonly tenant: string,
  ) {
    this.worker = new SyncWorker(entry, { op: 'open', args: { url, tenant } });
    // Shown to agents too (system_health): never the server, user or password, only what names the data.
    const schema = new URL(url).searchParams.get('schema') ?? 'colony';
    this.where = `PostgreSQL store, schema ${JSON.stringify(schema)}, tenant ${JSON.stringify(tenant)}`;
  }

  lock(after: ChainHead): PrimaryState {
    return this.worker.call('lock', { after });
  }

  commit(write: PrimaryWrite): void {
    this.worker.call('commit', write);
  }

  write(expect: Expectation, write: PrimaryWrite): void {
    this.worker.call('write', { expect, write });
  }

  /**
   * Writes this node sent, how many lost a race, how many ran the projections on PostgreSQL instead of the
   * copy's recorded writes, and how long it held the tenant's lock (ms, an upper bound).
   */
  stats(): { writes: number; optimistic: number; conflicts: number; fallbacks: number; heldMs: number } {
    return this.worker.call('stats');
  }

  rollback(): void {
    try {
      this.worker.call('rollback');
    } catch {
      // The worker is gone (and its transaction with it) or could not roll back: the lock is released either way.
    }
  }

  checkpoints(afterN: number): CheckpointRecord[] {
    return this.worker.call('checkpoints', { after: afterN });
  }

  saveCheckpoint(checkpoint: CheckpointRecord): void {
    this.worker.call('saveCheckpoint', checkpoint);
  }

  commands(prefix: string): CommandRecord[] {
    return this.worker.call('commands', { prefix });
  }

  rows(afterPosition: number, limit: number): EventRow[] {
    return this.worker.call('rows', { after: afterPosition, limit });
  }

  close(): void {
    void this.worker.close();
  }
}
