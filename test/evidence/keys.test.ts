import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import { canonicalize } from '../../src/canonical.js';
import nacl from 'tweetnacl';
import { openApp } from '../../src/app.js';
import { signingKeysDecider } from '../../src/commands/signing-keys.js';
import { openDatabase } from '../../src/engine/db.js';
import { signatureProblem, type SignedCheckpoint } from '../../src/evidence/checkpoint.js';
import { currentSigner } from '../../src/evidence/keys.js';
import {
  rotationStatement,
  SIGNING_KEYS_STREAM,
  type SigningKeyAdopted,
  type SigningKeyRotated,
} from '../../src/events/signing-keys.js';
import {
  fingerprint,
  keyFromSeed,
  loadOrCreateNextKey,
  loadOrCreateSigningKey,
  NEXT_KEY_FILE,
  publicKeyText,
  resolveSigningKey,
  sign,
  SIGNING_KEY_FILE,
  SigningKeyError,
} from '../../src/signing-key.js';
import { colony, colonyOk } from '../helpers/cli.js';
import { spec } from '../helpers/decider-spec.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The data dir's Ed25519 signing key. The decider without a database; then the real CLI on one
 * data dir, in order: init creates and adopts the key, key show lists it, a checkpoint is kept, key rotate
 * moves to a new key the old one endorses, and the kept checkpoint still verifies. A crash between
 * recording a rotation and installing its key file is finished by the next command; a malformed key file
 * stops Colony with one line and is never overwritten.
 */
const scratch = tempDir('colony-keys-');
after(() => scratch.cleanup());

const keyA = keyFromSeed(new Uint8Array(32).fill(1));
const keyB = keyFromSeed(new Uint8Array(32).fill(2));
const keyC = keyFromSeed(new Uint8Array(32).fill(3));

const adopted = (k = keyA): SigningKeyAdopted => ({
  type: 'SigningKeyAdopted',
  data: { keyId: k.keyId, publicKey: publicKeyText(k), by: 'init' },
});
const rotation = (from: typeof keyA, to: typeof keyA) => ({
  keyId: to.keyId,
  publicKey: publicKeyText(to),
  previousKeyId: from.keyId,
  endorsement: sign(
    from,
    canonicalize(rotationStatement({ keyId: to.keyId, previousKeyId: from.keyId, publicKey: publicKeyText(to) })),
  ),
  reason: 'scheduled rotation',
  by: 'cli',
});
const rotated = (from: typeof keyA, to: typeof keyA): SigningKeyRotated => ({
  type: 'SigningKeyRotated',
  data: rotation(from, to),
});
const rotate = (from: typeof keyA, to: typeof keyA) => ({ type: 'RotateSigningKey' as const, ...rotation(from, to) });
const adopt = (k = keyA) => ({
  type: 'AdoptSigningKey' as const,
  keyId: k.keyId,
  publicKey: publicKeyText(k),
  by: 'init',
});

describe('signing keys decider', () => {
  it('adopts the first key once; the same key again records nothing; another key is refused', () => {
    spec(signingKeysDecider).given([]).when(adopt()).then([adopted()]);
    spec(signingKeysDecider).given([adopted()]).when(adopt()).thenNothingHappened();
    spec(signingKeysDecider)
      .given([adopted()])
      .when(adopt(keyB))
      .thenThrows('ErrSigningKeyMismatch', 'only by rotation');
    spec(signingKeysDecider)
      .given([adopted(), rotated(keyA, keyB)])
      .when(adopt(keyB))
      .thenNothingHappened();
    spec(signingKeysDecider)
      .given([adopted(), rotated(keyA, keyB)])
      .when(adopt(keyA))
      .thenThrows('ErrSigningKeyMismatch');
  });

  it('rotates from the current key to a new one', () => {
    spec(signingKeysDecider)
      .given([adopted()])
      .when(rotate(keyA, keyB))
      .then([rotated(keyA, keyB)]);
    spec(signingKeysDecider)
      .given([adopted(), rotated(keyA, keyB)])
      .when(rotate(keyB, keyC))
      .then([rotated(keyB, keyC)]);
  });

  it('refuses a rotation with no key yet, or from a key that is not current', () => {
    spec(signingKeysDecider)
      .given([])
      .when(rotate(keyA, keyB))
      .thenThrows('ErrSigningKeyMismatch', 'no signing key yet');
    spec(signingKeysDecider)
      .given([adopted(), rotated(keyA, keyB)])
      .when(rotate(keyA, keyC))
      .thenThrows('ErrSigningKeyMismatch', 'current key is');
  });

  it('refuses a rotation to a key the log already used', () => {
    spec(signingKeysDecider)
      .given([adopted(), rotated(keyA, keyB)])
      .when(rotate(keyB, keyA))
      .thenThrows('ErrInvalidInput', 'already used');
    spec(signingKeysDecider).given([adopted()]).when(rotate(keyA, keyA)).thenThrows('ErrInvalidInput', 'already used');
  });

  it('keeps every key, the earlier ones retired when the next became current', () => {
    const at = (e: SigningKeyAdopted | SigningKeyRotated, recordedAt: string) => ({ ...e, recordedAt });
    const state = [at(adopted(), 't1'), at(rotated(keyA, keyB), 't2'), at(rotated(keyB, keyC), 't3')].reduce(
      (s, e) => signingKeysDecider.evolve(s, e),
      signingKeysDecider.initialState(),
    );
    assert.equal(state.current, keyC.keyId);
    assert.deepEqual(
      state.keys.map((k) => [k.keyId, k.since, k.retiredAt]),
      [
        [keyA.keyId, 't1', 't2'],
        [keyB.keyId, 't2', 't3'],
        [keyC.keyId, 't3', null],
      ],
    );
  });
});

describe('the key files', () => {
  it("derives from a seed the pair tweetnacl derives, which signs and verifies as tweetnacl's", () => {
    for (const fill of [0, 1, 7, 255]) {
      const seed = new Uint8Array(32).map((_, i) => (fill + i * 31) % 256);
      const ours = keyFromSeed(seed);
      const theirs = nacl.sign.keyPair.fromSeed(seed);
      assert.deepEqual(
        [Buffer.from(ours.publicKey), Buffer.from(ours.secretKey)],
        [Buffer.from(theirs.publicKey), Buffer.from(theirs.secretKey)],
      );
      assert.equal(ours.keyId, fingerprint(theirs.publicKey));
      const message = `checkpoint ${fill}`;
      const signature = Buffer.from(sign(ours, message), 'base64');
      assert.ok(nacl.sign.detached.verify(new TextEncoder().encode(message), signature, theirs.publicKey));
    }
  });

  it('a rotation cut short after it was recorded is finished: signing.key.next becomes signing.key', () => {
    const { dir, cleanup } = tempDir('colony-keyfiles-');
    try {
      const old = loadOrCreateSigningKey(dir);
      const next = loadOrCreateNextKey(dir);
      assert.notEqual(next.keyId, old.keyId);
      assert.equal(loadOrCreateNextKey(dir).keyId, next.keyId, 'a retried rotation reuses the same next key');
      // The log still names the old key (the rotation never committed): the old file signs, the next one stays.
      assert.equal(resolveSigningKey(dir, old.keyId).keyId, old.keyId);
      assert.ok(existsSync(join(dir, NEXT_KEY_FILE)));
      // The log already moved to the next key: it is installed.
      const nextSeed = readFileSync(join(dir, NEXT_KEY_FILE));
      assert.equal(resolveSigningKey(dir, next.keyId).keyId, next.keyId);
      assert.deepEqual(readFileSync(join(dir, SIGNING_KEY_FILE)), nextSeed);
      assert.equal(statSync(join(dir, SIGNING_KEY_FILE)).mode & 0o777, 0o600);
      assert.ok(!existsSync(join(dir, NEXT_KEY_FILE)));
      // A key the log does not name, with no next file to finish: refused, the file untouched.
      assert.throws(
        () => resolveSigningKey(dir, keyC.keyId),
        (e: unknown) =>
          e instanceof SigningKeyError &&
          e.message.includes(`the log's current signing key is ${keyC.keyId}`) &&
          e.message.includes(join(dir, SIGNING_KEY_FILE)),
      );
      assert.deepEqual(readFileSync(join(dir, SIGNING_KEY_FILE)), nextSeed);
      // A key file readable by others is narrowed back to 0600 when read.
      chmodSync(join(dir, SIGNING_KEY_FILE), 0o644);
      assert.equal(loadOrCreateSigningKey(dir).keyId, next.keyId);
      assert.equal(statSync(join(dir, SIGNING_KEY_FILE)).mode & 0o777, 0o600);
    } finally {
      cleanup();
    }
  });
});

const keyOfFile = (file: string) => keyFromSeed(new Uint8Array(readFileSync(file)));
const withDb = <T>(dir: string, fn: (db: Database) => T): T => {
  const db = openDatabase(join(dir, 'colony.db'));
  try {
    return fn(db);
  } finally {
    db.close();
  }
};
interface KeyShow {
  current: string;
  keys: { keyId: string; publicKey: string; since: string; retiredAt: string | null }[];
}

describe('the signing key through the CLI', () => {
  let data = '';
  let first = keyA;
  let oldCheckpointFile = '';
  let oldCheckpoint: SignedCheckpoint;
  before(() => {
    data = join(scratch.dir, 'data');
  });

  it('init creates signing.key (0600, a 32-byte seed), prints its fingerprint and adopts it in the log', () => {
    const out = colonyOk(['init', '--data', data]);
    const file = join(data, SIGNING_KEY_FILE);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file).length, 32);
    first = keyOfFile(file);
    assert.match(first.keyId, /^SHA256:[A-Za-z0-9+/]{43}$/);
    assert.ok(out.includes(`Signing key of checkpoints and goal bundles: ${first.keyId}`), out);
    const events = withDb(
      data,
      (db) =>
        db.prepare('SELECT type, data FROM es_events WHERE stream_id = ?').all(SIGNING_KEYS_STREAM) as {
          type: string;
          data: string;
        }[],
    );
    assert.deepEqual(
      events.map((e) => [e.type, JSON.parse(e.data)]),
      [['SigningKeyAdopted', { keyId: first.keyId, publicKey: publicKeyText(first), by: 'init' }]],
    );
  });

  it('key show --json lists it as the current key', () => {
    const shown = JSON.parse(colonyOk(['key', 'show', '--json', '--data', data])) as KeyShow;
    assert.equal(shown.current, first.keyId);
    assert.equal(shown.keys.length, 1);
    assert.deepEqual(
      { ...shown.keys[0], since: undefined },
      { keyId: first.keyId, publicKey: publicKeyText(first), since: undefined, retiredAt: null },
    );
    assert.ok(!Number.isNaN(Date.parse(shown.keys[0]!.since)), 'since is a time');
  });

  it('key rotate moves to a new key the old one endorses; the old key is listed as retired', () => {
    const cpText = colonyOk(['checkpoint', '--json', '--data', data]);
    oldCheckpointFile = join(scratch.dir, 'old-checkpoint.json');
    writeFileSync(oldCheckpointFile, cpText);
    oldCheckpoint = JSON.parse(cpText) as SignedCheckpoint;
    assert.equal(oldCheckpoint.checkpoint.body.keyId, first.keyId);

    const result = JSON.parse(colonyOk(['key', 'rotate', '--reason', 'yearly rotation', '--json', '--data', data])) as {
      previous: string;
      current: string;
    };
    const file = join(data, SIGNING_KEY_FILE);
    const second = keyOfFile(file);
    assert.deepEqual(result, { previous: first.keyId, current: second.keyId, endorsed: true });
    assert.notEqual(second.keyId, first.keyId);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(!existsSync(join(data, NEXT_KEY_FILE)), 'the next key file was installed');

    const shown = JSON.parse(colonyOk(['key', 'show', '--json', '--data', data])) as KeyShow;
    assert.equal(shown.current, second.keyId);
    assert.deepEqual(
      shown.keys.map((k) => k.keyId),
      [first.keyId, second.keyId],
    );
    const [old, now] = shown.keys;
    assert.equal(typeof old!.retiredAt, 'string');
    assert.equal(old!.retiredAt, now!.since, 'retired when the next key became current');
    assert.equal(now!.retiredAt, null);
    assert.equal(now!.publicKey, publicKeyText(second));

    const { rotatedEvent, latest } = withDb(data, (db) => ({
      rotatedEvent: db
        .prepare(`SELECT data FROM es_events WHERE stream_id = ? AND type = 'SigningKeyRotated'`)
        .pluck()
        .all(SIGNING_KEYS_STREAM) as string[],
      latest: db.prepare('SELECT key_id FROM es_checkpoints ORDER BY n DESC LIMIT 1').pluck().get() as string,
    }));
    assert.equal(rotatedEvent.length, 1);
    const d = JSON.parse(rotatedEvent[0]!) as SigningKeyRotated['data'];
    assert.deepEqual(
      { ...d, endorsement: undefined },
      {
        keyId: second.keyId,
        publicKey: publicKeyText(second),
        previousKeyId: first.keyId,
        reason: 'yearly rotation',
        by: 'cli',
        endorsement: undefined,
      },
    );
    // The endorsement: the OLD key's Ed25519 signature over the canonical rotation statement (checked with nacl, not Colony's helper).
    const statement = new TextEncoder().encode(
      JSON.stringify({
        format: 'colony-key-rotation',
        keyId: d.keyId,
        previousKeyId: d.previousKeyId,
        publicKey: d.publicKey,
      }),
    );
    assert.equal(
      canonicalize(rotationStatement(d)),
      new TextDecoder().decode(statement),
      'the statement is canonical JSON',
    );
    const endorsement = new Uint8Array(Buffer.from(d.endorsement, 'base64'));
    assert.ok(nacl.sign.detached.verify(statement, endorsement, first.publicKey), 'the old key endorses the new one');
    assert.ok(!nacl.sign.detached.verify(statement, endorsement, second.publicKey), 'not a self-signature');
    assert.equal(latest, second.keyId, 'rotate signs a first checkpoint under the new key');
  });

  it('a checkpoint signed before the rotation still verifies, and verify --since it passes', () => {
    assert.equal(signatureProblem(oldCheckpoint), null);
    const r = colony(['verify', '--since', oldCheckpointFile, '--json', '--data', data]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { ok: boolean; from: number; to: number };
    assert.equal(result.ok, true);
    assert.equal(result.from, oldCheckpoint.checkpoint.body.treeSize);
    assert.ok(result.to > result.from, 'the rotation was appended after it');
  });

  it('a crash after the rotation was recorded but before signing.key was replaced is finished by the next command', () => {
    const before = keyOfFile(join(data, SIGNING_KEY_FILE));
    let third: typeof keyA;
    // rotateSigningKey's first two steps, without installKey: the crash.
    const app = openApp({ dataDir: data });
    try {
      const previous = currentSigner(app.engine, data, 'test');
      assert.equal(previous.keyId, before.keyId);
      third = loadOrCreateNextKey(data);
      const statement = rotationStatement({
        keyId: third.keyId,
        previousKeyId: previous.keyId,
        publicKey: publicKeyText(third),
      });
      app.engine.handle(
        signingKeysDecider,
        SIGNING_KEYS_STREAM,
        {
          type: 'RotateSigningKey',
          keyId: third.keyId,
          publicKey: publicKeyText(third),
          previousKeyId: previous.keyId,
          endorsement: sign(previous, canonicalize(statement)),
          reason: 'crash test',
          by: 'test',
        },
        { actor: 'system' },
      );
    } finally {
      app.engine.close();
    }
    assert.ok(existsSync(join(data, NEXT_KEY_FILE)));
    const cp = JSON.parse(colonyOk(['checkpoint', '--json', '--data', data])) as SignedCheckpoint;
    assert.equal(cp.checkpoint.body.keyId, third.keyId, 'signed with the key the log moved to');
    assert.equal(signatureProblem(cp), null);
    assert.equal(keyOfFile(join(data, SIGNING_KEY_FILE)).keyId, third.keyId, 'signing.key.next was installed');
    assert.equal(statSync(join(data, SIGNING_KEY_FILE)).mode & 0o777, 0o600);
    assert.ok(!existsSync(join(data, NEXT_KEY_FILE)));
    assert.equal(fingerprint(new Uint8Array(Buffer.from(cp.publicKey, 'base64'))), third.keyId);
  });

  it('a malformed signing.key stops checkpoint, key rotate and serve with one line naming it, and is never overwritten', () => {
    const dir = join(scratch.dir, 'malformed');
    cpSync(data, dir, { recursive: true });
    const file = join(dir, SIGNING_KEY_FILE);
    const bytes = Buffer.from('short');
    writeFileSync(file, bytes, { mode: 0o600 });
    const escaped = file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    for (const args of [['checkpoint'], ['key', 'rotate'], ['serve', '--port', '0']]) {
      const r = colony([...args, '--data', dir]);
      assert.equal(r.code, 1, `${args.join(' ')} must fail: ${r.stdout}${r.stderr}`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0]!,
        new RegExp(
          `^colony: ${escaped} is malformed \\(5 bytes, expected a 32-byte Ed25519 seed\\); it was left untouched`,
        ),
      );
      assert.deepEqual(readFileSync(file), bytes, `${args.join(' ')} left the file as it was`);
      assert.ok(!existsSync(join(dir, NEXT_KEY_FILE)), 'no next key was created');
    }
    const checkpoints = withDb(dir, (db) => db.prepare('SELECT COUNT(*) FROM es_checkpoints').pluck().get());
    const original = withDb(data, (db) => db.prepare('SELECT COUNT(*) FROM es_checkpoints').pluck().get());
    assert.equal(checkpoints, original, 'nothing was signed');
  });

  it('a missing or replaced signing.key stops Colony (never silently replaced); key rotate --lost moves on, unendorsed', () => {
    const dir = join(scratch.dir, 'lost');
    cpSync(data, dir, { recursive: true });
    const file = join(dir, SIGNING_KEY_FILE);
    const current = keyOfFile(file).keyId;
    rmSync(file);
    for (const args of [['checkpoint'], ['goals', 'list'], ['serve', '--port', '0']]) {
      const r = colony([...args, '--data', dir]);
      assert.equal(r.code, 1, `${args.join(' ')} must fail: ${r.stdout}${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `signing\\.key is missing, but the log's current signing key is ${current.replace(/[+/]/g, '\\$&')}: restore`,
        ),
      );
      assert.ok(!existsSync(file), `${args.join(' ')} did not make a key of its own`);
    }
    writeFileSync(file, new Uint8Array(32).fill(9), { mode: 0o600 });
    const other = colony(['checkpoint', '--data', dir]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /holds key SHA256:\S+, but the log's current signing key is/);
    const refused = colony(['key', 'rotate', '--data', dir]);
    assert.equal(refused.code, 1, 'a plain rotation needs the current key');

    const lost = JSON.parse(
      colonyOk(['key', 'rotate', '--lost', '--reason', 'disk died', '--json', '--data', dir]),
    ) as {
      previous: string;
      current: string;
      endorsed: boolean;
    };
    assert.deepEqual([lost.previous, lost.endorsed], [current, false]);
    assert.equal(keyOfFile(file).keyId, lost.current, 'the new key replaced the stray file');
    const event = withDb(dir, (db) =>
      JSON.parse(
        db
          .prepare(`SELECT data FROM es_events WHERE stream_id = ? ORDER BY version DESC LIMIT 1`)
          .pluck()
          .get(SIGNING_KEYS_STREAM) as string,
      ),
    ) as SigningKeyRotated['data'];
    assert.deepEqual(
      [event.previousKeyId, event.keyId, event.endorsement, event.reason],
      [current, lost.current, '', 'previous key lost: disk died'],
    );
    const cp = JSON.parse(colonyOk(['checkpoint', '--json', '--data', dir])) as SignedCheckpoint;
    assert.equal(cp.checkpoint.body.keyId, lost.current);
    const again = colony(['key', 'rotate', '--lost', '--data', dir]);
    assert.equal(again.code, 1, 'with the current key present, --lost is refused');
    assert.match(again.stderr, /rotate without --lost/);
  });
});
