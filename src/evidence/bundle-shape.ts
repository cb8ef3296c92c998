import { z } from 'zod';
import type { Bundle } from './bundle.js';
import { BUNDLE_FORMAT, BUNDLE_VERSION, MANIFEST_FORMAT, MANIFEST_VERSION } from './bundle.js';

/**
 * The exact shape of a version-2 bundle (check 1, `bad_format`): every object has exactly its keys,
 * hashes are lowercase hex, base64 is canonical with the right length, counts are safe integers. A shape
 * this strict is what lets "any changed byte fails" hold: nothing in the file is left unchecked except the
 * snapshot, which the replay compares whole.
 */
const hash = z.string().regex(/^[0-9a-f]{64}$/, 'a hash must be 64 lowercase hex digits');
const count = (min: number) => z.number().int().min(min).max(Number.MAX_SAFE_INTEGER);
const base64 = (bytes: number) =>
  z.string().refine((s) => {
    const b = Buffer.from(s, 'base64');
    return b.length === bytes && b.toString('base64') === s;
  }, `must be the canonical base64 of ${bytes} bytes`);

const present = z.unknown().refine((v) => v !== undefined, 'is missing');

const body = z.strictObject({
  format: z.literal('colony-checkpoint'),
  version: z.literal(1),
  logId: hash,
  treeSize: count(1),
  rootHash: hash,
  heads: z.strictObject({ count: count(1), root: hash }),
  time: z.string(),
  keyId: z.string(),
});

// data, meta and snapshot came out of JSON.parse: any JSON is allowed there (their bytes are checked by hash and replay).
const event = z.strictObject({
  position: count(1),
  streamId: z.string().min(1),
  version: count(1),
  type: z.string().min(1),
  schemaVersion: count(1),
  data: present,
  meta: z.record(z.string(), z.unknown()),
  recordedAt: z.string(),
  prevHash: hash,
  hash,
  proof: z.array(hash),
});

const head = z.strictObject({
  streamId: z.string().min(1),
  version: count(1),
  hash,
  index: count(0),
  proof: z.array(hash),
});

const manifest = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  version: z.literal(MANIFEST_VERSION),
  goalId: count(1),
  logId: hash,
  treeSize: count(1),
  rootHash: hash,
  streams: z.array(z.string().min(1)),
  withheld: z.array(z.strictObject({ streamId: z.string().min(1), reason: z.string() })),
});

export const bundleShape = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  version: z.literal(BUNDLE_VERSION),
  goalId: count(1),
  checkpoint: z.strictObject({ body, signature: base64(64) }),
  manifest: z.strictObject({ body: manifest, signature: base64(64) }),
  publicKey: base64(32),
  streams: z.array(head),
  events: z.array(event),
  snapshot: z.record(z.string(), z.unknown()),
});

/**
 * A signed checkpoint as `colony checkpoint --json` writes it, or the same two members at the top of a
 * bundle (other members allowed): what `verify --since` reads.
 */
export const signedCheckpointShape = z.object({
  checkpoint: z.strictObject({ body, signature: base64(64) }),
  publicKey: base64(32),
});

/** Null when `value` has the shape (the bundle's by default); else where and what is wrong, in one line. */
export function shapeProblem(value: unknown, shape: z.ZodType = bundleShape): string | null {
  const result = shape.safeParse(value);
  if (result.success) return null;
  const issue = result.error.issues[0]!;
  return `${issue.path.length ? issue.path.join('.') : 'the bundle'}: ${issue.message}`;
}

export type CheckedBundle = Bundle;
