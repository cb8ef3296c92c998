import { hash } from 'node:crypto';
import { canonicalize } from '../canonical.js';
import { leafHash } from '../engine/merkle.js';
import { InclusionVerifier } from '../engine/merkle-verify.js';
import { fingerprint, verifySignature } from '../signing-key.js';
import type { Bundle, BundleEvent } from './bundle.js';
import { shapeProblem } from './bundle-shape.js';
import { byUtf8 } from './goal-streams.js';
import { headLeaf } from './heads.js';

/**
 * Checks 1–6 of a goal bundle (README "Goal bundles"), in the specified order, so this and the
 * independent tools/verify-bundle.mjs report the same first failure. Check 7, the replay, is in
 * bundle-replay.ts. Nothing here reads a database.
 */
export type BundleFailureCode =
  | 'bad_format'
  | 'bad_key'
  | 'untrusted_key'
  | 'bad_signature'
  | 'bad_head_proof'
  | 'event_out_of_order'
  | 'beyond_checkpoint'
  | 'foreign_stream'
  | 'event_hash_mismatch'
  | 'bad_inclusion_proof'
  | 'missing_event'
  | 'broken_link'
  | 'head_mismatch'
  | 'snapshot_mismatch';

export interface BundleFailure {
  code: BundleFailureCode;
  position?: number;
  streamId?: string;
  message: string;
}

export interface BundleSummary {
  goalId: number;
  events: number;
  streams: number;
  checkpoint: { treeSize: number; rootHash: string; time: string };
  keyId: string;
  trusted: boolean;
}

export type BundleCheck = { ok: true; bundle: Bundle; summary: BundleSummary } | { ok: false; failure: BundleFailure };

class Failed extends Error {
  constructor(readonly failure: BundleFailure) {
    super(failure.message);
  }
}
function fail(code: BundleFailureCode, message: string, where: { position?: number; streamId?: string } = {}): never {
  throw new Failed({ code, ...where, message });
}

/** `trusted`: public keys (base64) or fingerprints the caller trusts; null when none was given. */
export function checkBundle(
  bytes: Buffer,
  trusted: readonly string[] | null,
  onProgress?: (done: number, total: number) => void,
): BundleCheck {
  try {
    const { bundle, serialize } = parse(bytes);
    const keyId = checkKey(bundle, trusted);
    checkSignature(bundle);
    checkHeads(bundle);
    checkEvents(bundle, serialize, onProgress);
    checkComplete(bundle);
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

// Strict: a byte that is not UTF-8 would otherwise decode to U+FFFD and hide; a BOM is kept (and fails).
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * JSON.parse keeps an object's keys in the order of the text, except integer-like keys ("7", "10"), which
 * V8 puts first, in numeric order. So for a text without such keys whose every object has its keys sorted,
 * JSON.stringify of what it parsed to is the canonical form — V8's native serializer, several times faster
 * than canonicalize, which stays for the rest.
 */
const INTEGER_KEY = /"(?:0|[1-9]\d*)":/;

function keysSorted(root: unknown): boolean {
  const stack = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      if (i > 0 && !(keys[i - 1]! < keys[i]!)) return false;
      stack.push((v as Record<string, unknown>)[keys[i]!]);
    }
  }
  return true;
}

function parse(bytes: Buffer): { bundle: Bundle; serialize: (value: unknown) => string } {
  let value: unknown;
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return fail('bad_format', 'the file is not UTF-8');
  }
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail('bad_format', `not JSON: ${(e as Error).message}`);
  }
  const problem = shapeProblem(value);
  if (problem) fail('bad_format', problem);
  const serialize = INTEGER_KEY.test(text) || !keysSorted(value) ? canonicalize : (v: unknown) => JSON.stringify(v);
  let canonical: string;
  try {
    canonical = serialize(value);
  } catch (e) {
    return fail('bad_format', `cannot be canonicalized: ${(e as Error).message}`); // e.g. nested too deeply for the stack
  }
  if (`${canonical}\n` !== text)
    fail('bad_format', 'the file is not its own RFC 8785 canonical JSON followed by one newline');
  return { bundle: value as Bundle, serialize };
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
 * built with its keys in canonical order, so `serialize` may be JSON.stringify when parse() allowed it.
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
