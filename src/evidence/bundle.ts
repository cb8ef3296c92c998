import type { CheckpointBody } from './checkpoint.js';

/**
 * The goal bundle, format version 2 (docs/audit-evidence.md, "Goal bundle format, version 2", is its specification): a goal's whole history
 * with the proofs that it is complete and unaltered, one self-contained file. The file is the RFC 8785
 * canonical JSON of a `Bundle` followed by one LF, so no byte can change unnoticed.
 *
 * Version 2 adds the signed manifest: which streams are the goal's (so none can be dropped whole) and which
 * streams its events name but the bundle withholds, and why. Version 1 had no way to show that no stream
 * was left out, so it is refused (`unsupported_version`), not read.
 */
export const BUNDLE_FORMAT = 'colony-goal-bundle';
export const BUNDLE_VERSION = 2;
export const MANIFEST_FORMAT = 'colony-goal-manifest';
export const MANIFEST_VERSION = 1;

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

/** A stream the goal's events name that the bundle does not carry, and why. */
export interface WithheldStream {
  streamId: string;
  reason: string;
}

/**
 * What the exporter states about the goal's streams, signed by the checkpoint's key: the checkpoint says
 * every stream's head, not which streams are one goal's; this says that. `logId`, `treeSize` and `rootHash`
 * tie it to the bundle's checkpoint; both lists are sorted by the UTF-8 bytes of the stream id.
 */
export interface ManifestBody {
  format: typeof MANIFEST_FORMAT;
  version: typeof MANIFEST_VERSION;
  goalId: number;
  logId: string;
  treeSize: number;
  rootHash: string;
  streams: string[];
  withheld: WithheldStream[];
}

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  version: typeof BUNDLE_VERSION;
  goalId: number;
  checkpoint: { body: CheckpointBody; signature: string };
  /** Signed with the checkpoint's key, over the UTF-8 bytes of canonicalize(body). */
  manifest: { body: ManifestBody; signature: string };
  publicKey: string;
  streams: BundleStreamHead[];
  events: BundleEvent[];
  snapshot: unknown;
}
