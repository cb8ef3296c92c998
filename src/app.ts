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
import { PgPrimary } from './engine/pg/primary.js';

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
   * A PostgreSQL store (--store): the data dir keeps the keys, and the database is an in-memory copy of
   * the tenant that every write goes through to the store (engine/replica.ts).
   */
  store?: { url: string; tenant: string } | null;
}

export function openEngine(options: AppOptions): Engine {
  const store = options.store ?? null;
  return Engine.open({
    file: store ? ':memory:' : databaseFile(options.dataDir),
    primary: store
      ? new PgPrimary(new URL('./primary-worker.boot.mjs', import.meta.url), store.url, store.tenant)
      : undefined,
    durability: options.durability ?? 'full',
    clock: options.clock,
    projections: productProjections,
    rebuild: options.rebuild,
    // A copy of a PostgreSQL tenant starts empty: its tables are made before the rows come in.
    skipStartupRebuild: store ? false : options.skipStartupRebuild,
  });
}

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
