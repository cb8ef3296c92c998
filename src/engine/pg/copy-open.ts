import { log } from '../../log.js';
import { Engine, type EngineOptions } from '../engine.js';
import { claimCopySlot, copyProblem, removeCopy } from './copy-file.js';
import { PgPrimary } from './primary.js';

export interface TenantStore {
  url: string;
  tenant: string;
}

/**
 * Opens this process's copy of a PostgreSQL tenant (pg/copy-file.ts) as the engine's database, writing
 * through to the store: the copy's slot is taken, the copy checked against the store's chain before
 * anything runs (and thrown away, with one log line saying why, when it is not on it), then the engine
 * opens it — its projections brought current from the copy's own log, as a SQLite data dir's are — and
 * brings in only the rows the store committed after the copy's head.
 */
export function openTenantCopy(
  dataDir: string,
  store: TenantStore,
  /** The primary's worker entry (it serves the product's read models). */
  entry: URL,
  options: Omit<EngineOptions, 'file' | 'primary' | 'durability' | 'onClose'>,
): Engine {
  const slot = claimCopySlot(dataDir, store.url, store.tenant);
  let primary: PgPrimary | null = null;
  try {
    primary = new PgPrimary(entry, store.url, store.tenant);
    const problem = copyProblem(slot.file, primary);
    if (problem) {
      log.warn(
        { tenant: store.tenant, copy: slot.file, reason: problem },
        `threw away this node's copy of tenant ${store.tenant}: ${problem}; copying the tenant again from the store`,
      );
      removeCopy(slot.file);
    }
    // A cache of the store: a commit an OS crash loses is brought in again, so NORMAL is enough.
    return Engine.open({ ...options, file: slot.file, durability: 'normal', primary, onClose: slot.release });
  } catch (e) {
    primary?.close();
    slot.release();
    throw e;
  }
}
