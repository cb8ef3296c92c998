import { canonicalize } from '../canonical.js';
import { verifySignature } from '../signing-key.js';
import type { Bundle } from './bundle.js';
import { fail } from './bundle-failure.js';
import { namedStreams } from './bundle-refs.js';
import { byUtf8 } from './goal-streams.js';

/**
 * The checks that no whole stream is missing (docs/audit-evidence.md, "Goal bundle format, version 2"): the signed manifest is the
 * exporter's statement of which streams are the goal's and which it withholds (check 3), the bundle
 * carries exactly the manifest's streams (check 4), and every stream an included event names is carried or
 * withheld (check 7). The checkpoint alone cannot tell: it commits to every stream's head, not to which
 * streams belong to which goal. tools/verify-bundle.mjs runs the same checks in the same order.
 */

/** Check 3, after the checkpoint's signature: the manifest is signed by the same key and is about this bundle. */
export function checkManifest(bundle: Bundle): void {
  const { body, signature } = bundle.manifest;
  if (!verifySignature(new Uint8Array(Buffer.from(bundle.publicKey, 'base64')), canonicalize(body), signature))
    fail('bad_signature', `the manifest's signature does not verify with key ${bundle.checkpoint.body.keyId}`);
  const checkpoint = bundle.checkpoint.body;
  if (body.goalId !== bundle.goalId) fail('bad_manifest', `the manifest is about goal ${body.goalId}`);
  for (const k of ['logId', 'treeSize', 'rootHash'] as const)
    if (body[k] !== checkpoint[k]) fail('bad_manifest', `the manifest's ${k} is not the checkpoint's`);
  sorted(body.streams, 'streams');
  sorted(
    body.withheld.map((w) => w.streamId),
    'withheld',
  );
  const carried = new Set(body.streams);
  const both = body.withheld.find((w) => carried.has(w.streamId));
  if (both) fail('bad_manifest', `the manifest both lists and withholds ${both.streamId}`, { streamId: both.streamId });
}

function sorted(ids: readonly string[], what: string): void {
  ids.forEach((id, i) => {
    if (i > 0 && byUtf8(ids[i - 1]!, id) >= 0)
      fail('bad_manifest', `the manifest's ${what} are not sorted without repeats at ${id}`, { streamId: id });
  });
}

/** Check 4, after the heads' proofs: the bundle's streams are exactly the manifest's. */
export function checkListedStreams(bundle: Bundle): void {
  const listed = new Set(bundle.manifest.body.streams);
  for (const h of bundle.streams)
    if (!listed.has(h.streamId))
      fail('foreign_stream', `${h.streamId} is not one of the goal's streams the manifest lists`, {
        streamId: h.streamId,
      });
  const carried = new Set(bundle.streams.map((h) => h.streamId));
  for (const s of bundle.manifest.body.streams)
    if (!carried.has(s))
      fail('missing_stream', `the manifest lists ${s} as one of the goal's streams, but the bundle does not carry it`, {
        streamId: s,
      });
}

/** Check 7: every stream an included event names (bundle-refs.ts) is carried, or withheld by the manifest. */
export function checkReferences(bundle: Bundle): void {
  const known = new Set([
    ...bundle.streams.map((h) => h.streamId),
    ...bundle.manifest.body.withheld.map((w) => w.streamId),
  ]);
  for (const e of bundle.events)
    for (const { streamId, field } of namedStreams(e))
      if (!known.has(streamId))
        fail(
          'missing_stream',
          `${field} of event ${e.position} names ${streamId}, which the bundle neither carries nor withholds`,
          { streamId },
        );
}
