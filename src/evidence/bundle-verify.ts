import { hash } from 'node:crypto';
import { canonicalize } from '../canonical.js';
import { leafHash } from '../engine/merkle.js';
import { InclusionVerifier } from '../engine/merkle-verify.js';
import { fingerprint, verifySignature } from '../signing-key.js';
import type { Bundle, BundleEvent } from './bundle.js';
import { fail, Failed, type BundleFailure } from './bundle-failure.js';
import { parseBundle } from './bundle-parse.js';
import { checkListedStreams, checkManifest, checkReferences } from './bundle-verify-streams.js';
import { byUtf8 } from './goal-streams.js';
import { headLeaf } from './heads.js';

/**
 * Checks 1–7 of a goal bundle (docs/audit-evidence.md, "Goal bundle format, version 2"), in the specified order, so this and the
 * independent tools/verify-bundle.mjs report the same first failure. Check 1 reads the file (bundle-parse.ts);
 * the manifest and the streams the events name are bundle-verify-streams.ts'; check 8, the replay, is in
 * bundle-replay.ts. Nothing here reads a database.
 */
export interface BundleSummary {
  goalId: number;
  events: number;
  streams: number;
  checkpoint: { treeSize: number; rootHash: string; time: string };
  keyId: string;
  trusted: boolean;
}

export type BundleCheck = { ok: true; bundle: Bundle; summary: BundleSummary } | { ok: false; failure: BundleFailure };

/** `trusted`: public keys (base64) or fingerprints the caller trusts; null when none was given. */
export function checkBundle(
  bytes: Buffer,
  trusted: readonly string[] | null,
  onProgress?: (done: number, total: number) => void,
): BundleCheck {
  try {
    const { bundle, serialize } = parseBundle(bytes);
    const keyId = checkKey(bundle, trusted);
    checkSignature(bundle);
    checkManifest(bundle);
    checkHeads(bundle);
    checkListedStreams(bundle);
    checkEvents(bundle, serialize, onProgress);
    checkComplete(bundle);
    checkReferences(bundle);
    const { body } = bundle.checkpoint;
    return {
      ok: true,
      bundle,
      summary: {
        goalId: bundle.goalId,
        events: bundle.events.length,
        streams: bundle.streams.length,
        checkpoint: { treeSize: body.treeSize, rootHash: body.rootHash, time: body.time },
        keyId,
        trusted: trusted !== null,
      },
    };
  } catch (e) {
    if (e instanceof Failed) return { ok: false, failure: e.failure };
    throw e;
  }
}

function checkKey(bundle: Bundle, trusted: readonly string[] | null): string {
  const keyId = fingerprint(Buffer.from(bundle.publicKey, 'base64'));
  if (keyId !== bundle.checkpoint.body.keyId)
    fail('bad_key', `the checkpoint names key ${bundle.checkpoint.body.keyId} but the bundle carries key ${keyId}`);
  if (trusted && !trusted.some((k) => k === bundle.publicKey || k === keyId))
    fail('untrusted_key', `the bundle is signed by key ${keyId}, which is not a key you trust`);
  return keyId;
}

function checkSignature(bundle: Bundle): void {
  const { body, signature } = bundle.checkpoint;
  if (!verifySignature(new Uint8Array(Buffer.from(bundle.publicKey, 'base64')), canonicalize(body), signature)) {
    fail('bad_signature', `the checkpoint's signature does not verify with key ${body.keyId}`);
  }
}

function checkHeads(bundle: Bundle): void {
  const { heads } = bundle.checkpoint.body;
  const verifier = new InclusionVerifier(Buffer.from(heads.root, 'hex'), heads.count);
  let previous: string | null = null;
  for (const h of bundle.streams) {
    if (previous !== null && byUtf8(previous, h.streamId) >= 0)
      fail('bad_format', `streams are not sorted by stream id without repeats at ${h.streamId}`, {
        streamId: h.streamId,
      });
    previous = h.streamId;
    if (!verifier.verify(h.index, headLeaf(h), h.proof.map(fromHex))) {
      fail('bad_head_proof', `the head of ${h.streamId} (version ${h.version}) is not in the checkpoint's heads`, {
        streamId: h.streamId,
      });
    }
  }
  const goal = `goal-${bundle.goalId}`;
  if (!bundle.streams.some((h) => h.streamId === goal))
    fail('bad_format', `the goal's own stream ${goal} is not in the bundle`, { streamId: goal });
}

function checkEvents(
  bundle: Bundle,
  serialize: (value: unknown) => string,
  onProgress?: (done: number, total: number) => void,
): void {
  const { treeSize, rootHash } = bundle.checkpoint.body;
  const verifier = new InclusionVerifier(Buffer.from(rootHash, 'hex'), treeSize);
  const listed = new Set(bundle.streams.map((h) => h.streamId));
  const versions = new Map<string, number>();
  let previous: BundleEvent | null = null;
  bundle.events.forEach((e, i) => {
    const at = { position: e.position };
    if (previous && e.position <= previous.position)
      fail('event_out_of_order', `position ${e.position} comes after position ${previous.position}`, at);
    if (e.position > treeSize)
      fail('beyond_checkpoint', `position ${e.position} is beyond the checkpoint's ${treeSize} events`, at);
    if (!listed.has(e.streamId))
      fail('foreign_stream', `its stream ${e.streamId} is not one of the bundle's streams`, at);
    if (eventHash(e, serialize) !== e.hash)
      fail('event_hash_mismatch', `the event's content does not hash to its hash`, at);
    if (!verifier.verify(e.position - 1, leafHash(fromHex(e.hash)), e.proof.map(fromHex)))
      fail('bad_inclusion_proof', `the event is not in the checkpoint's log`, at);
    const last = versions.get(e.streamId) ?? 0;
    if (e.version !== last + 1) fail('missing_event', `${e.streamId} goes from version ${last} to ${e.version}`, at);
    versions.set(e.streamId, e.version);
    if (previous && previous.position === e.position - 1 && previous.hash !== e.prevHash)
      fail('broken_link', `prevHash is not the hash of position ${previous.position}`, at);
    previous = e;
    if (onProgress && (i % 1000 === 999 || i === bundle.events.length - 1)) onProgress(i + 1, bundle.events.length);
  });
}

function checkComplete(bundle: Bundle): void {
  const last = new Map<string, BundleEvent>();
  for (const e of bundle.events) last.set(e.streamId, e);
  for (const h of bundle.streams) {
    const e = last.get(h.streamId);
    if (!e || e.version < h.version)
      fail('missing_event', `${h.streamId} ends at version ${h.version} but the bundle stops at ${e?.version ?? 0}`, {
        streamId: h.streamId,
      });
    if (e.version > h.version || e.hash !== h.hash)
      fail('head_mismatch', `the last event of ${h.streamId} is not the head the checkpoint names`, {
        streamId: h.streamId,
      });
  }
}

/**
 * The log's event hash (engine/hash.ts), from the event's fields as a bundle carries them. The row is
 * built with its keys in canonical order, so `serialize` may be JSON.stringify when parseBundle() allowed it.
 */
export function eventHash(e: BundleEvent, serialize: (value: unknown) => string = canonicalize): string {
  const row = {
    data: e.data,
    meta: e.meta,
    position: e.position,
    prevHash: e.prevHash,
    recordedAt: e.recordedAt,
    schemaVersion: e.schemaVersion,
    streamId: e.streamId,
    type: e.type,
    version: e.version,
  };
  return hash('sha256', e.prevHash + serialize(row), 'hex');
}

const fromHex = (h: string): Buffer => Buffer.from(h, 'hex');
