import type { CheckpointBody } from './checkpoint.js';

/**
 * The goal bundle, format version 1 (README "Goal bundles" is its specification): a goal's whole history
 * with the proofs that it is complete and unaltered, one self-contained file. The file is the RFC 8785
 * canonical JSON of a `Bundle` followed by one LF, so no byte can change unnoticed.
 */
export const BUNDLE_FORMAT = 'colony-goal-bundle';
export const BUNDLE_VERSION = 1;

export interface BundleEvent {
  position: number;
  streamId: string;
  version: number;
  type: string;
  schemaVersion: number;
  data: unknown;
  meta: Record<string, unknown>;
  recordedAt: string;
  prevHash: string;
  hash: string;
  /** RFC 9162 inclusion proof of leaf `position − 1` in the checkpoint's tree, the leaf's sibling first. */
  proof: string[];
}

export interface BundleStreamHead {
  streamId: string;
  version: number;
  hash: string;
  /** The head's leaf index in the checkpoint's heads tree, and its inclusion proof there. */
  index: number;
  proof: string[];
}

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  version: typeof BUNDLE_VERSION;
  goalId: number;
  checkpoint: { body: CheckpointBody; signature: string };
  publicKey: string;
  streams: BundleStreamHead[];
  events: BundleEvent[];
  snapshot: unknown;
}
