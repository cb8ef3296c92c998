import { databaseFile } from './config.js';
import type { Durability } from './engine/db.js';
import { Engine } from './engine/engine.js';
import { loadOrCreateMasterKey } from './masterkey.js';
import { currentSigningKeyId } from './events/signing-keys.js';
import { resolveSigningKey } from './signing-key.js';
import type { RebuildOptions } from './engine/rebuild.js';
import type { AnyProjection } from './engine/projection.js';
import { channelsProjection } from './projections/channels.js';
import { principalsProjection } from './projections/principals.js';
import { streamsProjection } from './projections/streams.js';
import { goalsProjection } from './projections/goals.js';
import { proposalsProjection } from './projections/proposals.js';
import { reputationProjection } from './projections/reputation.js';
import { resourcesProjection } from './projections/resources.js';
import { secretsProjection } from './projections/secrets.js';
import { tasksProjection } from './projections/tasks.js';
import { runsProjection } from './projections/runs.js';
import { probesProjection } from './projections/probes.js';
import { projectsProjection } from './projections/projects.js';
import { webappsProjection } from './projections/webapps.js';
import { verifiersProjection } from './projections/verifiers.js';
import { oauthProjection } from './projections/oauth.js';
import { breakersProjection } from './projections/breakers.js';
import type { Clock } from './clock.js';
import { openTenantCopy } from './engine/pg/copy-open.js';

/**
 * The composition root: the product's projections and how Colony opens a data dir. A new projection
 * is added to productProjections; on the next start the engine builds it from the log.
 */
export const productProjections: readonly AnyProjection[] = [
  streamsProjection,
  principalsProjection,
  channelsProjection,
  goalsProjection,
  tasksProjection,
  proposalsProjection,
  reputationProjection,
  secretsProjection,
  resourcesProjection,
  runsProjection,
  probesProjection,
  projectsProjection,
  webappsProjection,
  verifiersProjection,
  oauthProjection,
  breakersProjection,
];

export interface App {
  readonly engine: Engine;
  readonly dataDir: string;
  /** The master key: seals agent tokens and secrets. */
  readonly key: Uint8Array;
}

export interface AppOptions {
  dataDir: string;
  durability?: Durability;
  clock?: Clock;
  rebuild?: RebuildOptions;
  skipStartupRebuild?: boolean;
  /** `colony key rotate --lost`: open although the signing key the log names is missing. */
  signingKeyLost?: boolean;
  /**
   * A PostgreSQL store (--store): the data dir keeps the keys and this process's copy of the tenant
   * (`copies/`, a cache a restart resumes), which every write goes through to the store (engine/replica.ts).
   */
  store?: { url: string; tenant: string } | null;
}

export function openEngine(options: AppOptions): Engine {
  const common = { clock: options.clock, projections: productProjections, rebuild: options.rebuild };
  if (options.store)
    // The tenant's copy is a file under the data dir that a restart resumes (engine/pg/copy-open.ts); its
    // projections are always brought current on open, like a SQLite data dir's.
    return openTenantCopy(options.dataDir, options.store, PRIMARY_WORKER, common);
  return Engine.open({
    ...common,
    file: databaseFile(options.dataDir),
    durability: options.durability ?? 'full',
    skipStartupRebuild: options.skipStartupRebuild,
  });
}

/** The worker thread behind a copy's primary, with the product's read models (primary-worker.ts). */
const PRIMARY_WORKER = new URL('./primary-worker.boot.mjs', import.meta.url);

/**
 * Opens the store and the master key (creating both on a fresh data dir), and checks the signing key
 * (created while the log names none): a malformed, missing or other key stops Colony here, before
 * anything runs — like the master key.
 */
export function openApp(options: AppOptions): App {
  const engine = openEngine(options);
  try {
    const key = loadOrCreateMasterKey(options.dataDir);
    if (!options.signingKeyLost) resolveSigningKey(options.dataDir, currentSigningKeyId(engine.db));
    return { engine, dataDir: options.dataDir, key };
  } catch (e) {
    engine.close();
    throw e;
  }
}
