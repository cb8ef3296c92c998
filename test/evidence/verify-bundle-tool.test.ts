import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { canonicalize } from '../../src/canonical.js';
import nacl from 'tweetnacl';
import {
  consistencyProof,
  EMPTY_ROOT,
  inclusionProof,
  leafHash,
  nodeHash,
  rootOfLeaves,
  type SubtreeHashes,
} from '../../src/engine/merkle.js';
import { InclusionVerifier, verifyConsistency, verifyInclusion } from '../../src/engine/merkle-verify.js';

/**
 * tools/verify-bundle.mjs, the auditors' stand-alone bundle verifier, is tested against bundles built here from
 * the project's own Merkle and hashing helpers: a signed log of 20 events over 4 streams, of which the bundle
 * carries the goal's stream and one card's stream. Every tamper must fail with its own code, at the event or
 * stream it touched. The Merkle helpers themselves are pinned to the Certificate Transparency test vectors and
 * round-tripped (and bit-flipped) for every tree of up to 40 leaves.
 */
const TOOL = fileURLToPath(new URL('../../tools/verify-bundle.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'colony-verify-bundle-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest();
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const fingerprint = (publicKey: Uint8Array): string =>
  `SHA256:${sha256(publicKey).toString('base64').replace(/=+$/, '')}`;
const memoryTree = (leaves: Buffer[]): SubtreeHashes => ({ range: (start, size) => rootOfLeaves(leaves, start, size) });
/** Flips the lowest bit of one hex digit: still lowercase hex, one byte different. */
const flipHex = (h: string, i = 0): string => h.slice(0, i) + (parseInt(h[i]!, 16) ^ 1).toString(16) + h.slice(i + 1);

// ---------------------------------------------------------------------------------------------- bundles

interface BundleEvent {
  data: unknown;
  hash: string;
  meta: Record<string, unknown>;
  position: number;
  prevHash: string;
  proof: string[];
  recordedAt: string;
  schemaVersion: number;
  streamId: string;
  type: string;
  version: number;
}
interface Head {
  hash: string;
  index: number;
  proof: string[];
  streamId: string;
  version: number;
}
interface Body {
  format: string;
  heads: { count: number; root: string };
  keyId: string;
  logId: string;
  rootHash: string;
  time: string;
  treeSize: number;
  version: number;
}
interface Manifest {
  format: string;
  goalId: number;
  logId: string;
  rootHash: string;
  streams: string[];
  treeSize: number;
  version: number;
  withheld: { reason: string; streamId: string }[];
}
interface Bundle {
  checkpoint: { body: Body; signature: string };
  events: BundleEvent[];
  format: string;
  goalId: number;
  manifest: { body: Manifest; signature: string };
  publicKey: string;
  snapshot: Record<string, unknown>;
  streams: Head[];
  version: number;
}

const GOAL = 7;
const KEY = nacl.sign.keyPair();
const OTHER_KEY = nacl.sign.keyPair();
/** The stream of each log position 1..20. The bundle carries goal-7 (1, 4, 8, 9, 14, 18) and card-3 (3, 6, 10, 13, 17). */
const PLAN = [
  'goal-7',
  'agent-1',
  'card-3',
  'goal-7',
  'project-2',
  'card-3',
  'agent-1',
  'goal-7',
  'goal-7',
  'card-3',
  'project-2',
  'agent-1',
  'card-3',
  'goal-7',
  'agent-1',
  'project-2',
  'card-3',
  'goal-7',
  'agent-1',
  'project-2',
];
const CARRIED = ['card-3', `goal-${GOAL}`];
/** The goal's first event names agent-1 (its coordinator), which the bundle does not carry: the manifest withholds it. */
const WITHHELD = [{ reason: 'an agent that did not work on the goal', streamId: 'agent-1' }];

interface BuildOptions {
  treeSize?: number;
  key?: nacl.SignKeyPair;
  /** Gives the event at this position a prevHash that is not its predecessor's hash (a log broken at signing time). */
  breakLinkAt?: number;
  /** Signs a heads tree in which this stream's head has this hash. */
  fakeHead?: { streamId: string; hash: string };
  /** Changes the manifest before it is signed (what a signer with a bug, or the key, could state). */
  manifest?: (m: Manifest) => void;
}

function build({ treeSize = PLAN.length, key = KEY, breakLinkAt, fakeHead, manifest }: BuildOptions = {}): Bundle {
  const events: BundleEvent[] = [];
  const versions = new Map<string, number>();
  let prevHash = '0'.repeat(64);
  PLAN.forEach((streamId, i) => {
    const position = i + 1;
    const version = (versions.get(streamId) ?? 0) + 1;
    versions.set(streamId, version);
    if (position === breakLinkAt) prevHash = flipHex(prevHash);
    const row = {
      data: {
        n: position,
        text: `event ${position} of ${streamId}: déjà vu ☃ 𝄞`,
        ratio: position / 8,
        tags: ['a', null, true],
        // RFC 8785 corners: keys in UTF-16 order (😀 is \ud83d\ude00, before \uffff), numbers in ECMAScript form.
        corners: {
          '\uffff': 1,
          '😀': 2,
          é: 3,
          '': [],
          big: 1e21,
          small: 1e-7,
          neg: -0.5,
          long: 123456789012345680000,
          esc: '"\\\n\u0001',
          replacement: '\ufffd',
        },
        ...(position === 1 ? { coordinatorAgentId: 1 } : {}),
      },
      meta: { actor: 'agent-1', correlationId: `c-${position}` },
      position,
      prevHash,
      recordedAt: `2025-05-01T12:00:${String(position).padStart(2, '0')}.000Z`,
      schemaVersion: 1,
      streamId,
      type: position === 1 ? 'GoalCreated' : version === 1 ? 'Opened' : 'Commented',
      version,
    };
    const hash = sha256(prevHash + canonicalize(row)).toString('hex');
    events.push({ ...row, hash, proof: [] });
    prevHash = hash;
  });
  const inTree = events.slice(0, treeSize);
  const logTree = memoryTree(inTree.map((e) => leafHash(Buffer.from(e.hash, 'hex'))));

  // The heads tree: the last event of every stream of the log at treeSize, sorted by stream id (all ASCII here).
  const last = new Map<string, BundleEvent>();
  for (const e of inTree) last.set(e.streamId, e);
  const heads = [...last.keys()].sort().map((streamId) => ({
    streamId,
    version: last.get(streamId)!.version,
    hash: fakeHead?.streamId === streamId ? fakeHead.hash : last.get(streamId)!.hash,
  }));
  const headLeaves = heads.map((h) =>
    leafHash(Buffer.from(canonicalize({ hash: h.hash, streamId: h.streamId, version: h.version }))),
  );
  const headTree = memoryTree(headLeaves);

  const body: Body = {
    format: 'colony-checkpoint',
    version: 1,
    logId: events[0]!.hash,
    treeSize,
    rootHash: hex(logTree.range(0, treeSize)),
    heads: { count: heads.length, root: hex(headTree.range(0, heads.length)) },
    time: '2025-05-01T12:01:00.000Z',
    keyId: fingerprint(key.publicKey),
  };
  const stated: Manifest = {
    format: 'colony-goal-manifest',
    version: 1,
    goalId: GOAL,
    logId: body.logId,
    treeSize,
    rootHash: body.rootHash,
    streams: [...CARRIED],
    withheld: structuredClone(WITHHELD),
  };
  manifest?.(stated);
  const signed = (value: unknown) => b64(nacl.sign.detached(Buffer.from(canonicalize(value)), key.secretKey));
  return {
    format: 'colony-goal-bundle',
    version: 2,
    goalId: GOAL,
    checkpoint: { body, signature: signed(body) },
    manifest: { body: stated, signature: signed(stated) },
    publicKey: b64(key.publicKey),
    streams: heads.flatMap((h, index) =>
      CARRIED.includes(h.streamId)
        ? [{ ...h, index, proof: inclusionProof(headTree, index, heads.length).map(hex) }]
        : [],
    ),
    events: inTree
      .filter((e) => CARRIED.includes(e.streamId))
      .map((e) => ({ ...e, proof: inclusionProof(logTree, e.position - 1, treeSize).map(hex) })),
    snapshot: { id: GOAL, title: 'Ship the verifier', status: 'open', cards: [3] },
  };
}

const GOOD = build();
const copy = (): Bundle => structuredClone(GOOD);
const indexOf = (b: Bundle, position: number): number => b.events.findIndex((e) => e.position === position);

let files = 0;
function write(bundle: Bundle | string | Buffer): string {
  const file = join(dir, `bundle-${++files}.json`);
  writeFileSync(file, typeof bundle === 'string' || Buffer.isBuffer(bundle) ? bundle : `${canonicalize(bundle)}\n`);
  return file;
}

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [TOOL, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Where = { position?: number; streamId?: string };
function expectFailure(bundle: Bundle | string | Buffer, code: string, where: Where = {}, args: string[] = []): void {
  const r = run([write(bundle), '--json', ...args]);
  assert.equal(r.status, 1, `exit status (stderr: ${r.stderr})`);
  const out = JSON.parse(r.stdout) as {
    ok: boolean;
    failure: { code: string; position?: number; streamId?: string; message: string };
  };
  assert.equal(out.ok, false);
  const { message, ...got } = out.failure;
  assert.deepEqual(got, { code, ...where }, message);
  const about =
    where.position !== undefined
      ? ` at event ${where.position}`
      : where.streamId !== undefined
        ? ` for stream ${where.streamId}`
        : '';
  assert.equal(r.stderr, `verify-bundle: ${code}${about}: ${out.failure.message}\n`);
}

describe('tools/verify-bundle.mjs', () => {
  const goodFile = write(GOOD);
  const summary = {
    ok: true,
    goalId: GOAL,
    events: 11,
    streams: 2,
    checkpoint: { treeSize: 20, rootHash: GOOD.checkpoint.body.rootHash, time: '2025-05-01T12:01:00.000Z' },
    keyId: fingerprint(KEY.publicKey),
  };

  it('accepts the good bundle with a trusted key, given as base64, fingerprint or key file', () => {
    const textKeys = join(dir, 'keys.txt');
    writeFileSync(textKeys, `# trusted\n\n${b64(OTHER_KEY.publicKey)}\n${fingerprint(KEY.publicKey)}\n`);
    const jsonKeys = join(dir, 'keys.json');
    writeFileSync(
      jsonKeys,
      JSON.stringify({ keys: [{ publicKey: b64(KEY.publicKey), keyId: fingerprint(KEY.publicKey) }] }),
    );
    const oneKey = join(dir, 'key.json');
    writeFileSync(oneKey, JSON.stringify({ publicKey: b64(KEY.publicKey) }));
    for (const args of [
      ['--key', b64(KEY.publicKey)],
      ['--key', b64(OTHER_KEY.publicKey), '--key', fingerprint(KEY.publicKey)],
      ['--key-file', textKeys],
      ['--key-file', jsonKeys],
      ['--key-file', oneKey],
    ]) {
      const r = run([goodFile, '--json', ...args]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.deepEqual(JSON.parse(r.stdout), { ...summary, trusted: true });
    }
  });

  it('without a trusted key, verifies with the bundle key and warns once on stderr', () => {
    const human = run([goodFile]);
    assert.equal(human.status, 0, human.stderr);
    assert.equal(
      human.stdout,
      `ok: goal ${GOAL}, 11 events in 2 streams, checkpoint of 20 events ` +
        `(root ${summary.checkpoint.rootHash}) signed at 2025-05-01T12:01:00.000Z by ${summary.keyId}\n`,
    );
    assert.equal(human.stderr.split('\n').length, 2);
    assert.match(human.stderr, /^verify-bundle: warning: .*not checked against a trusted key/);
    assert.ok(human.stderr.includes(summary.keyId));
    const json = run([goodFile, '--json']);
    assert.equal(json.status, 0);
    assert.deepEqual(JSON.parse(json.stdout), { ...summary, trusted: false });
  });

  it('fails a changed byte of an event data, even in a re-canonicalized file (event_hash_mismatch)', () => {
    const b = copy();
    const e = b.events[indexOf(b, 9)]!;
    const data = e.data as { text: string };
    data.text = data.text.replace('event', 'evenu');
    expectFailure(b, 'event_hash_mismatch', { position: 9 });
  });

  it('fails a file that is not its own canonical form (bad_format)', () => {
    const text = `${canonicalize(GOOD)}\n`;
    expectFailure(text.replace('{"checkpoint":', '{ "checkpoint":'), 'bad_format');
    expectFailure(text.trimEnd(), 'bad_format');
    expectFailure(`${text}\n`, 'bad_format');
    expectFailure(`\ufeff${text}`, 'bad_format');
    expectFailure(text.replace('"version":2}', '"version":2.0}'), 'bad_format');
    expectFailure(text.slice(0, 100), 'bad_format');
    // Invalid UTF-8 decodes to U+FFFD, so the bundle's own U+FFFD (EF BF BD) swapped for a lone 0xFF byte reads as the
    // same text: only a comparison of bytes catches it.
    const bytes = Buffer.from(text);
    const at = bytes.indexOf(Buffer.from('\ufffd'));
    assert.ok(at > 0);
    expectFailure(Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]), 'bad_format');
  });

  it('fails a bundle of the wrong shape (bad_format)', () => {
    const tampers: [tamper: (b: Bundle) => void, where?: Where][] = [
      [
        (b) => {
          (b as unknown as Record<string, unknown>).extra = 1;
        },
      ],
      [
        (b) => {
          delete (b.events[0] as Partial<BundleEvent>).meta;
        },
      ],
      [
        (b) => {
          (b.events[0] as unknown as Record<string, unknown>).note = 'x';
        },
      ],
      [
        (b) => {
          (b.streams[0] as unknown as Record<string, unknown>).extra = 'x';
        },
      ],
      [
        (b) => {
          (b.checkpoint.body.heads as Record<string, unknown>).extra = 0;
        },
      ],
      [
        (b) => {
          b.events[0]!.position = 0;
        },
      ],
      [
        (b) => {
          b.events[0]!.version = 1.5;
        },
      ],
      [
        (b) => {
          b.events[0]!.type = 5 as unknown as string;
        },
      ],
      [
        (b) => {
          b.events[0]!.meta = [] as unknown as Record<string, unknown>;
        },
      ],
      [
        (b) => {
          b.events[0]!.hash = b.events[0]!.hash.toUpperCase();
        },
      ],
      [
        (b) => {
          b.events[0]!.proof[0] = b.events[0]!.proof[0]!.slice(2);
        },
      ],
      [
        (b) => {
          b.publicKey = b.publicKey.replace(/=$/, '');
        },
      ],
      [
        (b) => {
          b.publicKey = b64(sha256('x').subarray(0, 31));
        },
      ],
      [
        (b) => {
          b.checkpoint.signature = `${b.checkpoint.signature.slice(0, 40)} ${b.checkpoint.signature.slice(40)}`;
        },
      ],
      [
        (b) => {
          b.checkpoint.body.treeSize = 2 ** 53;
        },
      ],
      [
        (b) => {
          b.snapshot = null as unknown as Record<string, unknown>;
        },
      ],
      [
        (b) => {
          b.format = 'colony-bundle';
        },
      ],
      [
        (b) => {
          b.streams.reverse();
        },
        { streamId: 'card-3' },
      ],
      [
        (b) => {
          b.streams = b.streams.filter((s) => s.streamId !== `goal-${GOAL}`);
        },
        { streamId: `goal-${GOAL}` },
      ],
    ];
    for (const [tamper, where] of tampers) {
      const b = copy();
      tamper(b);
      expectFailure(b, 'bad_format', where);
    }
  });

  it('fails a removed event (missing_event), at the next event of its stream or at the stream head', () => {
    const b = copy();
    b.events.splice(indexOf(b, 8), 1);
    expectFailure(b, 'missing_event', { position: 9 });
    const tail = copy();
    tail.events.splice(indexOf(tail, 18), 1);
    expectFailure(tail, 'missing_event', { streamId: `goal-${GOAL}` });
  });

  it('fails a duplicated or moved event (event_out_of_order)', () => {
    const dup = copy();
    dup.events.splice(indexOf(dup, 6) + 1, 0, structuredClone(dup.events[indexOf(dup, 6)]!));
    expectFailure(dup, 'event_out_of_order', { position: 6 });
    const moved = copy(); // the card's first event moved after the goal's second: 1, 4, 3, 6, ...
    const [e] = moved.events.splice(indexOf(moved, 3), 1);
    moved.events.splice(indexOf(moved, 4) + 1, 0, e!);
    expectFailure(moved, 'event_out_of_order', { position: 3 });
  });

  it('fails an event whose stream is not listed (foreign_stream)', () => {
    const b = build({ manifest: (m) => (m.streams = [`goal-${GOAL}`]) });
    b.streams = b.streams.filter((s) => s.streamId !== 'card-3');
    expectFailure(b, 'foreign_stream', { position: 3 });
  });

  it('fails a stream dropped whole, or slipped in, against the signed manifest (missing_stream, foreign_stream)', () => {
    const dropped = copy();
    dropped.streams = dropped.streams.filter((s) => s.streamId !== 'card-3');
    dropped.events = dropped.events.filter((e) => e.streamId !== 'card-3');
    expectFailure(dropped, 'missing_stream', { streamId: 'card-3' });
    const unlisted = build({ manifest: (m) => (m.streams = [`goal-${GOAL}`]) });
    expectFailure(unlisted, 'foreign_stream', { streamId: 'card-3' });
    // The manifest edited to match: its signature no longer verifies.
    const edited = copy();
    edited.manifest.body.streams = [`goal-${GOAL}`];
    edited.streams = dropped.streams;
    edited.events = dropped.events;
    expectFailure(edited, 'bad_signature');
  });

  it('fails a named stream neither carried nor withheld (missing_stream), and a manifest of another bundle (bad_manifest)', () => {
    expectFailure(build({ manifest: (m) => (m.withheld = []) }), 'missing_stream', { streamId: 'agent-1' });
    expectFailure(build({ manifest: (m) => (m.goalId = 8) }), 'bad_manifest');
    expectFailure(build({ manifest: (m) => (m.treeSize = 19) }), 'bad_manifest');
    expectFailure(build({ manifest: (m) => (m.rootHash = flipHex(m.rootHash)) }), 'bad_manifest');
    expectFailure(build({ manifest: (m) => m.streams.reverse() }), 'bad_manifest', { streamId: 'card-3' });
    expectFailure(build({ manifest: (m) => m.withheld.push({ reason: '', streamId: 'card-3' }) }), 'bad_manifest', {
      streamId: 'card-3',
    });
    const older = copy();
    older.manifest = build({ treeSize: 19 }).manifest;
    expectFailure(older, 'bad_manifest');
  });

  it('refuses a bundle of format version 1 (unsupported_version), before its shape', () => {
    const v1 = copy() as unknown as Record<string, unknown>;
    v1.version = 1;
    delete v1.manifest;
    expectFailure(`${canonicalize(v1)}\n`, 'unsupported_version');
    v1.version = 3;
    expectFailure(`${canonicalize(v1)}\n`, 'unsupported_version');
  });

  it('fails a changed hash in an event proof, also where earlier proofs were accepted (bad_inclusion_proof)', () => {
    // Every element of the first, a middle and the last event's proof (the last one's upper nodes were all
    // accepted before); one element, in turn, of the others. Each case is a process, hence not all of them.
    const last = GOOD.events.length - 1;
    for (const [i, e] of GOOD.events.entries()) {
      assert.ok(e.proof.length >= 3);
      for (let j = 0; j < e.proof.length; j++) {
        if (![0, 5, last].includes(i) && j !== i % e.proof.length) continue;
        const b = copy();
        b.events[i]!.proof[j] = flipHex(e.proof[j]!, (7 * j) % 64);
        expectFailure(b, 'bad_inclusion_proof', { position: e.position });
      }
    }
    const short = copy();
    short.events[last]!.proof.pop();
    expectFailure(short, 'bad_inclusion_proof', { position: GOOD.events[last]!.position });
    const long = copy();
    long.events[last]!.proof.push(GOOD.checkpoint.body.rootHash);
    expectFailure(long, 'bad_inclusion_proof', { position: GOOD.events[last]!.position });
  });

  it('fails a changed checkpoint body (bad_signature)', () => {
    const b = copy();
    b.checkpoint.body.treeSize = 19;
    expectFailure(b, 'bad_signature');
    const time = copy();
    time.checkpoint.body.time = '2025-05-01T12:01:01.000Z';
    expectFailure(time, 'bad_signature');
  });

  it('fails a bundle signed by a key that is not trusted (untrusted_key)', () => {
    const other = build({ key: OTHER_KEY });
    expectFailure(other, 'untrusted_key', {}, ['--key', b64(KEY.publicKey)]);
    expectFailure(other, 'untrusted_key', {}, ['--key', fingerprint(KEY.publicKey)]);
    const r = run([write(other), '--json']); // with no trusted key it verifies, with a warning
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stderr.includes(fingerprint(OTHER_KEY.publicKey)));
  });

  it('fails a keyId that is not the fingerprint of publicKey (bad_key)', () => {
    const b = copy();
    b.checkpoint.body.keyId = fingerprint(OTHER_KEY.publicKey);
    expectFailure(b, 'bad_key');
    const swapped = copy();
    swapped.publicKey = b64(OTHER_KEY.publicKey);
    expectFailure(swapped, 'bad_key');
  });

  it('fails a changed head hash or head proof (bad_head_proof)', () => {
    for (const [i, s] of GOOD.streams.entries()) {
      const b = copy();
      b.streams[i]!.hash = flipHex(s.hash, 63);
      expectFailure(b, 'bad_head_proof', { streamId: s.streamId });
      for (let j = 0; j < s.proof.length; j++) {
        const p = copy();
        p.streams[i]!.proof[j] = flipHex(s.proof[j]!, 5);
        expectFailure(p, 'bad_head_proof', { streamId: s.streamId });
      }
    }
  });

  it('fails a head that the bundle events do not reach (head_mismatch)', () => {
    expectFailure(build({ fakeHead: { streamId: 'card-3', hash: 'ab'.repeat(32) } }), 'head_mismatch', {
      streamId: 'card-3',
    });
  });

  it('fails an event beyond the checkpoint (beyond_checkpoint) and a broken chain link (broken_link)', () => {
    const b = build({ treeSize: 17 });
    b.events.push(GOOD.events[indexOf(GOOD, 18)]!);
    expectFailure(b, 'beyond_checkpoint', { position: 18 });
    expectFailure(build({ breakLinkAt: 9 }), 'broken_link', { position: 9 });
    const r = run([write(build({ breakLinkAt: 5 })), '--json']); // position 4 is in the bundle, 5 is not: not checked
    assert.equal(r.status, 0, r.stderr);
  });

  it('strips control characters from bundle text on the terminal', () => {
    const b = copy();
    b.events[0]!.streamId = 'evil\u001b[2J\u0007\u009b31m\u007f-stream';
    const r = run([write(b)]);
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'verify-bundle: foreign_stream at event 1: stream evil[2J31m-stream is not in streams\n');
    const json = run([write(b), '--json']);
    assert.doesNotMatch(json.stdout.slice(0, -1), /[\u0000-\u001f\u007f-\u009f]/);
    assert.equal((JSON.parse(json.stdout) as { failure: { code: string } }).failure.code, 'foreign_stream');
  });

  it('exits 2 on a usage error', () => {
    for (const args of [
      [],
      [join(dir, 'missing.json')],
      [goodFile, '--key', 'not-a-key'],
      [goodFile, '--key'],
      [goodFile, '--key', b64(sha256('x').subarray(0, 31))],
      [goodFile, '--key-file', join(dir, 'none')],
      [goodFile, '--frobnicate'],
    ]) {
      const r = run(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^verify-bundle: [^\n]+\n$/);
    }
  });
});

// ---------------------------------------------------------------------------------------------- Merkle

/**
 * The Certificate Transparency test vectors (RFC 6962 hashing, unchanged in RFC 9162): the leaf inputs and tree
 * heads of github.com/transparency-dev/merkle testonly/constants.go (LeafInputs, RootHashes), the inclusion
 * proofs of testonly/reference_test.go (TestRefInclusionProof, 0-based leaf index) and the consistency proofs
 * of the certificate-transparency merkle_tree_test.cc.
 */
const CT_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((h) => Buffer.from(h, 'hex'));
const CT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const CT_INCLUSION: [index: number, size: number, path: string[]][] = [
  [0, 1, []],
  [0, 2, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7']],
  [1, 2, ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d']],
  [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    1,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
  [
    0,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    5,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
];
const CT_CONSISTENCY: [from: number, to: number, proof: string[]][] = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [
    2,
    5,
    [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];

const MAX = 40;
const LEAVES = Array.from({ length: MAX }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
const TREE = memoryTree(LEAVES);
const ROOTS = Array.from({ length: MAX + 1 }, (_, n) => rootOfLeaves(LEAVES, 0, n));
/**
 * The proof with one bit of one element flipped. For trees of up to 8 leaves every bit of every element is flipped
 * in turn. Above 8 leaves that would take half a minute of SHA-256, so instead one bit of every byte is flipped, and
 * which bit it is rotates with the byte, the element and `salt` (the leaf index), so all eight bit positions are hit.
 */
function* bitFlips(proof: readonly Buffer[], treeSize: number, salt = 0): Generator<Buffer[]> {
  for (let j = 0; j < proof.length; j++) {
    for (let bit = 0; bit < 256; bit++) {
      if (treeSize > 8 && bit % 8 !== ((bit >> 3) + j + salt) % 8) continue;
      const bad = proof.map((p) => Buffer.from(p));
      bad[j]![bit >> 3]! ^= 1 << (bit & 7);
      yield bad;
    }
  }
}

describe('RFC 9162 Merkle trees (src/engine/merkle.ts, merkle-verify.ts)', () => {
  const ct = CT_LEAVES.map((l) => leafHash(l));
  const ctTree = memoryTree(ct);

  it('gives the Certificate Transparency roots for trees of 0..8 leaves', () => {
    assert.equal(hex(EMPTY_ROOT), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(hex(rootOfLeaves([])), hex(EMPTY_ROOT));
    assert.equal(hex(ct[0]!), CT_ROOTS[0]);
    assert.equal(hex(nodeHash(ct[0]!, ct[1]!)), CT_ROOTS[1]);
    for (let n = 1; n <= 8; n++) assert.equal(hex(rootOfLeaves(ct.slice(0, n))), CT_ROOTS[n - 1], `size ${n}`);
  });

  it('gives and accepts the Certificate Transparency inclusion and consistency proofs', () => {
    for (const [index, size, path] of CT_INCLUSION) {
      assert.deepEqual(inclusionProof(ctTree, index, size).map(hex), path, `leaf ${index} of ${size}`);
      const root = Buffer.from(CT_ROOTS[size - 1]!, 'hex');
      assert.ok(
        verifyInclusion(
          index,
          size,
          ct[index]!,
          path.map((h) => Buffer.from(h, 'hex')),
          root,
        ),
      );
    }
    for (const [from, to, proof] of CT_CONSISTENCY) {
      assert.deepEqual(consistencyProof(ctTree, from, to).map(hex), proof, `${from} -> ${to}`);
      const [a, b] = [Buffer.from(CT_ROOTS[from - 1]!, 'hex'), Buffer.from(CT_ROOTS[to - 1]!, 'hex')];
      assert.ok(
        verifyConsistency(
          from,
          to,
          a,
          b,
          proof.map((h) => Buffer.from(h, 'hex')),
        ),
      );
    }
  });

  it('round-trips every inclusion proof of every tree up to 40 leaves, and fails a flipped bit anywhere', () => {
    for (let size = 1; size <= MAX; size++) {
      const shared = new InclusionVerifier(ROOTS[size]!, size); // remembers the nodes of every proof it accepted
      const proofs = Array.from({ length: size }, (_, index) => inclusionProof(TREE, index, size));
      for (const [index, proof] of proofs.entries()) {
        assert.ok(verifyInclusion(index, size, LEAVES[index]!, proof, ROOTS[size]!), `leaf ${index} of ${size}`);
        assert.ok(shared.verify(index, LEAVES[index]!, proof), `leaf ${index} of ${size}, shared verifier`);
      }
      for (const [index, proof] of [...proofs.entries()].reverse())
        assert.ok(shared.verify(index, LEAVES[index]!, proof));
      for (const [index, proof] of proofs.entries()) {
        for (const bad of bitFlips(proof, size, index)) {
          assert.equal(
            verifyInclusion(index, size, LEAVES[index]!, bad, ROOTS[size]!),
            false,
            `leaf ${index} of ${size}`,
          );
          assert.equal(shared.verify(index, LEAVES[index]!, bad), false, `leaf ${index} of ${size}, shared verifier`);
        }
        assert.equal(
          shared.verify(index, LEAVES[index]!, proof.slice(1)),
          index === 0 && size === 1,
          'a shortened proof',
        );
        assert.equal(shared.verify(index, LEAVES[index]!, [...proof, ROOTS[size]!]), false, 'a lengthened proof');
        if (size > 1) assert.equal(shared.verify((index + 1) % size, LEAVES[index]!, proof), false, 'another index');
      }
      assert.equal(shared.verify(size, LEAVES[0]!, []), false, 'an index outside the tree');
    }
  });

  it('round-trips every consistency proof of trees up to 40 leaves, and fails a flipped bit anywhere', () => {
    for (let to = 1; to <= MAX; to++) {
      for (let from = 0; from <= to; from++) {
        const proof = consistencyProof(TREE, from, to);
        assert.ok(verifyConsistency(from, to, ROOTS[from]!, ROOTS[to]!, proof), `${from} -> ${to}`);
        for (const bad of bitFlips(proof, to, from)) {
          assert.equal(verifyConsistency(from, to, ROOTS[from]!, ROOTS[to]!, bad), false, `${from} -> ${to}`);
        }
        if (from > 0 && from < to) {
          assert.equal(verifyConsistency(from, to, ROOTS[from]!, ROOTS[to - 1]!, proof), false, 'another new root');
          assert.equal(verifyConsistency(from, to, ROOTS[from - 1]!, ROOTS[to]!, proof), false, 'another old root');
        }
      }
    }
  });
});
