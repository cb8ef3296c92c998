import { chmodSync, closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';

/**
 * The master key: 32 random bytes in `<data>/secrets.key`, mode 0600, created once with
 * O_EXCL so two processes never race to two keys. A key file of the wrong size stops Colony with a
 * clear error and is never overwritten (that would make every sealed value unreadable).
 * Sealed values are base64(nonce ‖ secretbox(plaintext)).
 */
export const KEY_FILE = 'secrets.key';

export class MasterKeyError extends Error {}

export function loadOrCreateMasterKey(dataDir: string): Uint8Array {
  const file = join(dataDir, KEY_FILE);
  if (!existsSync(file)) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, nacl.randomBytes(nacl.secretbox.keyLength));
      closeSync(fd);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  const key = readFileSync(file);
  if (key.length !== nacl.secretbox.keyLength) {
    throw new MasterKeyError(
      `${file} is malformed (${key.length} bytes, expected ${nacl.secretbox.keyLength}); it was left untouched — restore it from a backup`,
    );
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return new Uint8Array(key);
}

export function seal(key: Uint8Array, plaintext: string): string {
  const nonce = nacl.randomBytes(nacl.secretbox.nonceLength);
  const box = nacl.secretbox(new TextEncoder().encode(plaintext), nonce, key);
  const out = new Uint8Array(nonce.length + box.length);
  out.set(nonce);
  out.set(box, nonce.length);
  return Buffer.from(out).toString('base64');
}

export function unseal(key: Uint8Array, sealed: string): string {
  const bytes = new Uint8Array(Buffer.from(sealed, 'base64'));
  const nonce = bytes.subarray(0, nacl.secretbox.nonceLength);
  const plain = nacl.secretbox.open(bytes.subarray(nacl.secretbox.nonceLength), nonce, key);
  if (!plain) throw new MasterKeyError('a sealed value could not be opened: wrong master key or tampered data');
  return new TextDecoder().decode(plain);
}
