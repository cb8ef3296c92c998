import { canonicalize } from '../canonical.js';
import type { Engine } from '../engine/engine.js';
import { notFound } from '../errors.js';
import { EVENT_COLUMNS, type EventRow } from '../engine/event.js';
import { inclusionProof, leafHash } from '../engine/merkle.js';
import { InclusionVerifier } from '../engine/merkle-verify.js';
import { readHead } from '../engine/store.js';
import { prepared } from '../engine/db.js';
import { goalSnapshot } from '../projections/goal-snapshot.js';
import { getGoal } from '../projections/goal-queries.js';
import { BUNDLE_FORMAT, BUNDLE_VERSION, type Bundle, type BundleEvent, type BundleStreamHead } from './bundle.js';
import {
  checkpointParts,
  latestCheckpoint,
  signBody,
  type CheckpointParts,
  type SignedCheckpoint,
} from './checkpoint.js';
import { extendsLatest, keepCheckpoint, readWithSoundTree } from './sign.js';
import { goalManifest, signManifest, type ManifestResult } from './bundle-manifest.js';
import { bundleText } from './bundle-text.js';
import { goalStreams } from './goal-streams.js';
import { currentSigner } from './keys.js';

/**
 * `colony export --goal ID`: the goal's bundle at the log's current head. Everything — the checkpoint's
 * tree and heads, the snapshot, the events and their proofs — is read in one read transaction, so it is all
 * of one moment of the log even while `serve` keeps appending; the checkpoint is stored after (signed, it
 * stays true of that size). The latest checkpoint is reused when it already states this size. The manifest
 * (which streams are the goal's, which its events name but the bundle withholds) is signed with the same key.
 */
export interface ExportResult {
  bundle: Bundle;
  text: string;
  reusedCheckpoint: boolean;
}

export function exportGoalBundle(
  engine: Engine,
  dataDir: string,
  goalId: number,
  onProgress?: (done: number, total: number) => void,
): ExportResult {
  const { db } = engine;
  engine.catchUp(); // on a copy of a PostgreSQL tenant: the log and checkpoints as the store has them now
  const key = currentSigner(engine, dataDir, 'export');
  const time = engine.clock().toISOString();
  let proven: Proven | null = null;
  // Read at one moment of the log; the proofs must lead to the root they will be signed with (sign.ts).
  const read = readWithSoundTree(
    db,
    () => {
      if (!getGoal(db, goalId)) throw notFound(`goal ${goalId}`, { goalId });
      const parts = checkpointParts(db, key.keyId, time, readHead(db).position);
      const snapshot = JSON.parse(canonicalize(goalSnapshot(db, goalId))) as unknown;
      const streams = goalStreams(db, goalId);
      return { parts, snapshot, streams, rows: streamRows(engine, streams, parts.body.treeSize) };
    },
    (r) => {
      const p = (proven = prove(db, goalId, r.parts, r.streams, r.rows, onProgress));
      return (
        extendsLatest(db, r.parts) ??
        proofProblem(r.parts, p.events) ??
        headsProblem(r.parts, r.streams, r.rows) ??
        p.manifest.problem
      );
    },
  );
  const { events, heads, manifest } = proven!;
  const latest = latestCheckpoint(db);
  const same = latest && sameStatement(latest.checkpoint.body, read.parts.body) ? latest : null;
  const signed: SignedCheckpoint = same ?? signBody(key, read.parts.body);
  const bundle: Bundle = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    goalId,
    checkpoint: signed.checkpoint,
    manifest: signManifest(key, manifest.body!),
    publicKey: signed.publicKey,
    streams: heads,
    events,
    snapshot: read.snapshot,
  };
  if (!same) keepCheckpoint(engine, signed, 'export');
  return {
    bundle,
    text: bundleText(bundle, new Map(read.rows.map((r) => [r.position, r]))),
    reusedCheckpoint: same !== null,
  };
}

/** The same tree, heads and key: a checkpoint that already says what this one would. */
const sameStatement = (a: SignedCheckpoint['checkpoint']['body'], b: SignedCheckpoint['checkpoint']['body']): boolean =>
  a.logId === b.logId &&
  a.treeSize === b.treeSize &&
  a.rootHash === b.rootHash &&
  a.heads.root === b.heads.root &&
  a.keyId === b.keyId;

interface Proven {
  events: BundleEvent[];
  heads: BundleStreamHead[];
  manifest: ManifestResult;
}

/** The events and heads with their proofs, and the manifest that states them: what the export will sign. */
function prove(
  db: Engine['db'],
  goalId: number,
  parts: CheckpointParts,
  streams: readonly string[],
  rows: readonly EventRow[],
  onProgress?: (done: number, total: number) => void,
): Proven {
  const events = proveEvents(parts, rows, onProgress);
  const heads = proveHeads(parts, streams);
  const ids = heads.map((h) => h.streamId);
  return { events, heads, manifest: goalManifest(db, goalId, parts.body, ids, events) };
}

function streamRows(engine: Engine, streams: readonly string[], size: number): EventRow[] {
  const select = prepared(
    engine.db,
    `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id = ? AND position <= ? ORDER BY version`,
  );
  return streams.flatMap((s) => select.all(s, size) as EventRow[]).sort((a, b) => a.position - b.position);
}

function proveEvents(
  { tree, body }: CheckpointParts,
  rows: readonly EventRow[],
  onProgress?: (done: number, total: number) => void,
): BundleEvent[] {
  return rows.map((r, i) => {
    if (onProgress && (i % 500 === 0 || i === rows.length - 1)) onProgress(i + 1, rows.length);
    return {
      position: r.position,
      streamId: r.stream_id,
      version: r.version,
      type: r.type,
      schemaVersion: r.schema_version,
      data: JSON.parse(r.data) as unknown,
      meta: JSON.parse(r.meta) as Record<string, unknown>,
      recordedAt: r.recorded_at,
      prevHash: r.prev_hash,
      hash: r.hash,
      proof: inclusionProof(tree, r.position - 1, body.treeSize).map(hex),
    };
  });
}

function proveHeads({ heads }: CheckpointParts, streams: readonly string[]): BundleStreamHead[] {
  return streams.flatMap((streamId) => {
    const index = heads.indexOf(streamId);
    if (index === undefined) return []; // named by a projection but without events up to this size
    const head = heads.heads[index]!;
    return [
      {
        streamId,
        version: head.version,
        hash: head.hash,
        index,
        proof: inclusionProof(heads, index, heads.heads.length).map(hex),
      },
    ];
  });
}

/** Every event's proof checked against the root it will be signed with (cheap: the proofs share their nodes). */
function proofProblem({ body }: CheckpointParts, events: readonly BundleEvent[]): string | null {
  const verifier = new InclusionVerifier(Buffer.from(body.rootHash, 'hex'), body.treeSize);
  const bad = events.find(
    (e) =>
      !verifier.verify(
        e.position - 1,
        leafHash(Buffer.from(e.hash, 'hex')),
        e.proof.map((p) => Buffer.from(p, 'hex')),
      ),
  );
  return bad ? `the inclusion proof of position ${bad.position} does not lead to the tree's root` : null;
}

/** Each of the goal's streams must end, in the heads, at its last row read here (the read table could lie). */
function headsProblem(
  { heads }: CheckpointParts,
  streams: readonly string[],
  rows: readonly EventRow[],
): string | null {
  const last = new Map<string, EventRow>();
  for (const r of rows) last.set(r.stream_id, r);
  for (const s of streams) {
    const i = heads.indexOf(s);
    const row = last.get(s);
    if (i === undefined && !row) continue;
    const head = i === undefined ? undefined : heads.heads[i];
    if (!head || !row || head.version !== row.version || head.hash !== row.hash) {
      return `the stream heads disagree with the log for ${s}: run "colony rebuild --projection streams"`;
    }
  }
  return null;
}

const hex = (b: Buffer): string => b.toString('hex');
