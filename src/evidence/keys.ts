import type { Database } from 'better-sqlite3';
import { canonicalize } from 'json-canonicalize';
import { signingKeysDecider, type SigningKeysState } from '../commands/signing-keys.js';
import type { Engine } from '../engine.js';
import type { SigningKeyEvent } from '../events/signing-keys.js';
import { rotationStatement, SIGNING_KEYS_STREAM } from '../events/signing-keys.js';
import { readStream } from '../events/store.js';
import {
  installKey, loadOrCreateNextKey, loadOrCreateSigningKey, publicKeyText, resolveSigningKey, sign, type SigningKey,
} from '../signing-key.js';

/**
 * The signing key as the log knows it: the keys it adopted and rotated to (events), tied to the key files
 * of the data dir (signing-key.ts). The stream is a handful of events, read whole.
 */
export function signingKeys(db: Database): SigningKeysState {
  return readStream(db, SIGNING_KEYS_STREAM).reduce(
    (state, e) => signingKeysDecider.evolve(state, e as unknown as SigningKeyEvent),
    signingKeysDecider.initialState(),
  );
}

const SYSTEM = { actor: 'system' } as const;

/**
 * The key to sign with now. A log that has adopted no key yet (a new data dir, or one from before signed
 * checkpoints) adopts the key file's key — recorded in the log, so every checkpoint's key is one the log
 * names.
 */
export function currentSigner(engine: Engine, dataDir: string, by: string): SigningKey {
  const current = signingKeys(engine.db).current;
  const key = resolveSigningKey(dataDir, current);
  if (current === null) {
    engine.handle(signingKeysDecider, SIGNING_KEYS_STREAM, { type: 'AdoptSigningKey', keyId: key.keyId, publicKey: publicKeyText(key), by }, SYSTEM);
  }
  return key;
}

/** `init`: the data dir's key is created and adopted at once. */
export function adoptSigningKey(engine: Engine, dataDir: string): SigningKey {
  loadOrCreateSigningKey(dataDir);
  return currentSigner(engine, dataDir, 'init');
}

/**
 * Moves the log to a new key: the next key file is written first, the rotation (endorsed by the old key)
 * is recorded, then the new key replaces the old file. A crash between the last two steps is finished by
 * the next `resolveSigningKey`.
 */
export function rotateSigningKey(engine: Engine, dataDir: string, reason: string, by: string): { previous: SigningKey; next: SigningKey } {
  const previous = currentSigner(engine, dataDir, by);
  const next = loadOrCreateNextKey(dataDir);
  const statement = rotationStatement({ keyId: next.keyId, previousKeyId: previous.keyId, publicKey: publicKeyText(next) });
  engine.handle(signingKeysDecider, SIGNING_KEYS_STREAM, {
    type: 'RotateSigningKey', keyId: next.keyId, publicKey: publicKeyText(next), previousKeyId: previous.keyId,
    endorsement: sign(previous, canonicalize(statement)), reason, by,
  }, SYSTEM);
  installKey(dataDir, next);
  return { previous, next };
}
