import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { Event } from '../engine/event.js';

/**
 * The log's signing keys, on one stream `signing-keys-1`: which Ed25519 key signs checkpoints,
 * from which position on. Keys are never removed: a retired key stays valid for the checkpoints it signed,
 * and an auditor reads here which key was current when. The private keys stay in files of the data dir.
 *
 * A rotation carries the old key's signature over the new key (`endorsement`, over the canonical JSON of
 * {format: 'colony-key-rotation', keyId, previousKeyId, publicKey}), so whoever trusts the old key can
 * check that its holder handed over to the new one.
 */
export const SIGNING_KEYS_STREAM = 'signing-keys-1';

export type SigningKeyAdopted = Event<'SigningKeyAdopted', { keyId: string; publicKey: string; by: string }>;
export type SigningKeyRotated = Event<
  'SigningKeyRotated',
  {
    keyId: string;
    publicKey: string;
    previousKeyId: string;
    endorsement: string;
    reason: string;
    by: string;
  }
>;
export type SigningKeyEvent = SigningKeyAdopted | SigningKeyRotated;

export const rotationStatement = (d: { keyId: string; previousKeyId: string; publicKey: string }) => ({
  format: 'colony-key-rotation',
  keyId: d.keyId,
  previousKeyId: d.previousKeyId,
  publicKey: d.publicKey,
});

/** The key the log signs with now (its last adoption or rotation), null before the first: one indexed row. */
export function currentSigningKeyId(db: Database): string | null {
  const data = prepared(db, 'SELECT data FROM es_events WHERE stream_id = ? ORDER BY version DESC LIMIT 1')
    .pluck()
    .get(SIGNING_KEYS_STREAM) as string | undefined;
  return data === undefined ? null : (JSON.parse(data) as { keyId: string }).keyId;
}
