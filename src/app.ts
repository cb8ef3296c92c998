import { databaseFile } from './config.js';
import type { Durability } from './db.js';
import { Engine } from './engine.js';
import type { RebuildOptions } from './projections/rebuild.js';
import type { AnyProjection } from './projections/projection.js';
import { streamsProjection } from './projections/streams.js';

/**
 * The composition root: the product's projections and how the engine is opened on a data dir.
 * Each domain adds its projections here as it lands.
 */
export const productProjections: readonly AnyProjection[] = [streamsProjection];

export interface AppOptions {
  dataDir: string;
  durability?: Durability;
  rebuild?: RebuildOptions;
  skipStartupRebuild?: boolean;
}

export function openEngine(options: AppOptions): Engine {
  return Engine.open({
    file: databaseFile(options.dataDir),
    durability: options.durability ?? 'full',
    projections: productProjections,
    rebuild: options.rebuild,
    skipStartupRebuild: options.skipStartupRebuild,
  });
}
