import { createHash, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';

/**
 * The data directory's Ed25519 signing key: it signs checkpoints of the log, so an auditor who
 * trusts only its public key can check a goal bundle offline. `<data>/signing.key` holds the 32-byte seed,
 * mode 0600, created once with O_EXCL (two processes never race to two keys) and never overwritten; a file
 * of the wrong size stops Colony with a clear error, like the master key.
 *
 * Rotation writes the next key to `signing.key.next` first, records the rotation in the log, then renames
 * it over `signing.key`; `resolveSigningKey` finishes a rotation a crash interrupted between those steps.
 */
export const SIGNING_KEY_FILE = 'signing.key';
export const NEXT_KEY_FILE = 'signing.key.next';
const SEED_BYTES = nacl.sign.seedLength;

export class SigningKeyError extends Error {}

export interface SigningKey {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
  /** `SHA256:` + unpadded base64 of sha256(public key) — the form `ssh-keygen -l` prints. */
  keyId: string;
}

export const fingerprint = (publicKey: Uint8Array): string =>
  `SHA256:${createHash('sha256').update(publicKey).digest('base64').replace(/=+$/, '')}`;

export const publicKeyText = (key: { publicKey: Uint8Array }): string => Buffer.from(key.publicKey).toString('base64');

// Every signing re-reads the key file (a rotation by another process must take effect): the pairs are
// remembered by seed.
const derived = new Map<string, SigningKey>();
/** A PKCS#8 Ed25519 private key is this DER prefix and the 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The pair tweetnacl would derive (its secret key is the seed then the public key), derived by Node's
 * crypto: every command opening a data dir checks its key (app.ts), and tweetnacl's first derivation,
 * in pure JS on a cold JIT, cost ~20 ms of each CLI command's start.
 */
export function keyFromSeed(seed: Uint8Array): SigningKey {
  const id = Buffer.from(seed).toString('hex');
  let key = derived.get(id);
  if (!key) {
    const der = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const publicKey = new Uint8Array(createPublicKey(der).export({ format: 'der', type: 'spki' }).subarray(-32));
    const secretKey = new Uint8Array(SEED_BYTES + publicKey.length);
    secretKey.set(seed);
    secretKey.set(publicKey, SEED_BYTES);
    key = { publicKey, secretKey, keyId: fingerprint(publicKey) };
    derived.set(id, key);
  }
  return key;
}

/** Creates the key file when there is none (init, and the first start of an older data dir). */
export function loadOrCreateSigningKey(dataDir: string): SigningKey {
  createKeyFile(join(dataDir, SIGNING_KEY_FILE));
  return readKeyFile(join(dataDir, SIGNING_KEY_FILE));
}

export function readKeyFile(file: string): SigningKey {
  const seed = readFileSync(file);
  if (seed.length !== SEED_BYTES) {
    throw new SigningKeyError(
      `${file} is malformed (${seed.length} bytes, expected a ${SEED_BYTES}-byte Ed25519 seed); it was left untouched — restore it from a backup`,
    );
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return keyFromSeed(new Uint8Array(seed));
}

function createKeyFile(file: string): void {
  if (existsSync(file)) return;
  try {
    const fd = openSync(file, 'wx', 0o600);
    writeSync(fd, nacl.randomBytes(SEED_BYTES));
    closeSync(fd);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/** The key a rotation will move to: created once, reused if a rotation is retried after a crash. */
export function loadOrCreateNextKey(dataDir: string): SigningKey {
  createKeyFile(join(dataDir, NEXT_KEY_FILE));
  return readKeyFile(join(dataDir, NEXT_KEY_FILE));
}

/**
 * The key to sign with, given the log's current key id (null when the log has adopted none yet):
 * `signing.key` when it is that key; else `signing.key.next` when the log already moved to it (a rotation
 * cut short by a crash: finished here); else an error — signing with a key the log does not name would
 * make checkpoints no auditor can tie to this log.
 */
export function resolveSigningKey(dataDir: string, currentKeyId: string | null): SigningKey {
  if (currentKeyId === null) return loadOrCreateSigningKey(dataDir);
  // The log names its key: a missing file is never replaced by a new key (it would sign for no one).
  const file = join(dataDir, SIGNING_KEY_FILE);
  const key = existsSync(file) ? readKeyFile(file) : null;
  const nextFile = join(dataDir, NEXT_KEY_FILE);
  // A `signing.key.next` of a rotation that never committed stays: the next rotation reuses it.
  if (key?.keyId === currentKeyId) return key;
  if (existsSync(nextFile)) {
    const next = readKeyFile(nextFile);
    if (next.keyId === currentKeyId) {
      renameSync(nextFile, join(dataDir, SIGNING_KEY_FILE));
      return next;
    }
  }
  throw new SigningKeyError(
    `${file} ${key ? `holds key ${key.keyId}` : 'is missing'}, but the log's current signing key is ${currentKeyId}: restore the key ` +
      `file from a backup (checkpoints signed by any other key would not be this log's); if it is lost for good, "colony key rotate --lost" ` +
      "moves the log to a new key, recorded without the old key's endorsement",
  );
}

/** After the log recorded the rotation: the new key becomes `signing.key` (written whole, then renamed). */
export function installKey(dataDir: string, key: SigningKey): void {
  const file = join(dataDir, SIGNING_KEY_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  writeSync(fd, key.secretKey.subarray(0, SEED_BYTES));
  closeSync(fd);
  renameSync(tmp, file);
  rmSync(join(dataDir, NEXT_KEY_FILE), { force: true });
}

export function sign(key: SigningKey, message: string): string {
  return Buffer.from(nacl.sign.detached(new TextEncoder().encode(message), key.secretKey)).toString('base64');
}

/**
 * Verified with Node's crypto (OpenSSL), not tweetnacl: tweetnacl accepts a signature whose S is not
 * reduced (S + L), so a changed signature would still verify — and the independent verifier, which uses
 * Node's crypto, would disagree.
 */
export function verifySignature(publicKey: Uint8Array, message: string, signature: string): boolean {
  const sig = Buffer.from(signature, 'base64');
  if (sig.length !== nacl.sign.signatureLength || publicKey.length !== nacl.sign.publicKeyLength) return false;
  try {
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') },
      format: 'jwk',
    });
    return verify(null, Buffer.from(message, 'utf8'), key, sig);
  } catch {
    return false; // not a point on the curve
  }
}
