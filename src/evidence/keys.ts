import type { Database } from 'better-sqlite3';
import { canonicalize } from '../canonical.js';
import { signingKeysDecider, type SigningKeysState } from '../commands/signing-keys.js';
import type { Engine } from '../engine/engine.js';
import { invalidInput } from '../errors.js';
import type { SigningKeyEvent } from '../events/signing-keys.js';
import { rotationStatement, SIGNING_KEYS_STREAM } from '../events/signing-keys.js';
import { readStream } from '../engine/store.js';
import {
  installKey,
  loadOrCreateNextKey,
  loadOrCreateSigningKey,
  publicKeyText,
  resolveSigningKey,
  sign,
  type SigningKey,
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
    engine.handle(
      signingKeysDecider,
      SIGNING_KEYS_STREAM,
      { type: 'AdoptSigningKey', keyId: key.keyId, publicKey: publicKeyText(key), by },
      SYSTEM,
    );
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
export function rotateSigningKey(
  engine: Engine,
  dataDir: string,
  reason: string,
  by: string,
): { previous: string; next: SigningKey } {
  const previous = currentSigner(engine, dataDir, by);
  const next = loadOrCreateNextKey(dataDir);
  const statement = rotationStatement({
    keyId: next.keyId,
    previousKeyId: previous.keyId,
    publicKey: publicKeyText(next),
  });
  return record(engine, dataDir, next, previous.keyId, sign(previous, canonicalize(statement)), reason, by);
}

/**
 * `key rotate --lost`: the key the log names is gone (no file, or another key in its place), so the new
 * key comes without an endorsement — recorded as such, for an auditor to weigh: only the log's own
 * history, not the old key, vouches for the new one.
 */
export function replaceLostSigningKey(
  engine: Engine,
  dataDir: string,
  reason: string,
  by: string,
): { previous: string; next: SigningKey } {
  const current = signingKeys(engine.db).current;
  if (current === null)
    throw invalidInput('the log has no signing key yet: nothing is lost ("colony key show" adopts the key file)');
  let available = false;
  try {
    available = resolveSigningKey(dataDir, current).keyId === current;
  } catch {
    // Missing or another key: that is what --lost is for.
  }
  if (available)
    throw invalidInput(
      `the current key ${current} is in ${dataDir}: rotate without --lost, so the old key endorses the new one`,
    );
  // A file holding another key is replaced whole by the new one (installKey), never reused.
  return record(engine, dataDir, loadOrCreateNextKey(dataDir), current, '', `previous key lost: ${reason}`, by);
}

function record(
  engine: Engine,
  dataDir: string,
  next: SigningKey,
  previousKeyId: string,
  endorsement: string,
  reason: string,
  by: string,
) {
  engine.handle(
    signingKeysDecider,
    SIGNING_KEYS_STREAM,
    {
      type: 'RotateSigningKey',
      keyId: next.keyId,
      publicKey: publicKeyText(next),
      previousKeyId,
      endorsement,
      reason,
      by,
    },
    SYSTEM,
  );
  installKey(dataDir, next);
  return { previous: previousKeyId, next };
}
