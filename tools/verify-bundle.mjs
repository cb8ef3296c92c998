#!/usr/bin/env node
// verify-bundle.mjs: checks a Colony goal bundle (format version 2) using only Node's own modules, so an
// auditor can read the whole verifier and does not have to trust Colony's code.
//
//   node tools/verify-bundle.mjs FILE [--key KEY]... [--key-file F] [--json]
//
// KEY is the base64 of a 32-byte Ed25519 public key, or its fingerprint SHA256:<unpadded base64 of sha256(key)>.
// --key-file F holds JSON ({"publicKey"} or {"keys": [{"publicKey"}]}), or one KEY per line (# starts a comment).
// Exit codes: 0 verified; 1 the bundle fails a check (only the first failing check is reported); 2 usage error.
// The checks are steps 1 to 7 of the bundle spec, run in its order. Step 8 (replaying the events against `snapshot`)
// needs Colony's projection code, so only `colony verify-bundle` runs it.
import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { TextDecoder } from 'node:util';

// RFC 8785 canonical JSON. RFC 8785 takes its string and number forms from ECMAScript, so JSON.stringify
// writes them exactly. Object keys are sorted by UTF-16 code units, which is what Array.prototype.sort does
// by default. RFC 8785 does not allow NaN or Infinity (JSON.parse returns Infinity for a literal like 1e999).
function canonicalize(value) {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`non-finite number ${value}`);
  if (value === null || ['number', 'boolean', 'string'].includes(typeof value)) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(',')}]`;
  if (typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalize(value[k])}`)
      .join(',')}}`;
  }
  throw new TypeError(`${typeof value} is not a JSON value`);
}

// RFC 9162 §2.1 hashing. The 0x00 and 0x01 prefixes mean a leaf can never pass for an inner node.
const sha256 = (...parts) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
const leafHash = (data) => sha256(Buffer.from([0]), data);
const nodeHash = (left, right) => sha256(Buffer.from([1]), left, right);
const fingerprint = (publicKey) => `SHA256:${sha256(publicKey).toString('base64').replace(/=+$/, '')}`;

// RFC 9162 §2.1.3.2 inclusion proof check, for many proofs in one tree. This is a port of InclusionVerifier in
// src/engine/merkle-verify.ts. Every node of an accepted proof is saved, keyed by (level, index). A later proof
// reuses a saved parent only if both of its children equal saved nodes. So a changed byte in any proof still fails,
// and the proofs for one goal's events, which share their upper nodes, cost only a few hashes each.
class InclusionVerifier {
  #known = new Map();
  constructor(root, size) {
    Object.assign(this, { root, size });
  }
  verify(index, leaf, path) {
    if (!(Number.isSafeInteger(index) && index >= 0 && index < this.size)) return false;
    let [fn, sn, level, r] = [index, this.size - 1, 0, leaf]; // fn: the node's index, sn: the last index, per level
    const seen = [[`0:${fn}`, leaf]];
    for (const p of path) {
      if (sn === 0) return false; // the path is longer than the tree is deep
      // The last node of a level that has no right sibling moves up unchanged (the tree's ragged right edge).
      while (fn === sn && fn % 2 === 0 && fn !== 0)
        [fn, sn, level] = [Math.floor(fn / 2), Math.floor(sn / 2), level + 1];
      const left = fn % 2 === 1; // true when p is the left sibling
      const siblingKey = `${level}:${left ? fn - 1 : fn + 1}`;
      const parentKey = `${level + 1}:${Math.floor(fn / 2)}`;
      const known = this.#known.get(parentKey);
      const reuse = known && this.#known.get(`${level}:${fn}`)?.equals(r) && this.#known.get(siblingKey)?.equals(p);
      r = reuse ? known : left ? nodeHash(p, r) : nodeHash(r, p);
      seen.push([siblingKey, p], [parentKey, r]);
      [fn, sn, level] = [Math.floor(fn / 2), Math.floor(sn / 2), level + 1];
    }
    if (sn !== 0 || !r.equals(this.root)) return false;
    for (const [key, hash] of seen) this.#known.set(key, hash); // save nodes only from proofs that reach the root
    return true;
  }
}

// A check failure. `where` is {position} for an event or {streamId} for a stream.
class Failure extends Error {
  constructor(code, message, where = {}) {
    super(message);
    Object.assign(this, { code, where });
  }
}
const fail = (code, message, where) => {
  throw new Failure(code, message, where);
};
const bad = (message, where) => fail('bad_format', message, where);

// Step 1's shape, written as a schema. obj() requires exactly the keys listed, and any failure is bad_format
// naming the JSON path.
const need = (ok, at, what) => ok || bad(`${at} is not ${what}`);
const anyJson = () => {};
const object = (v, at) => need(typeof v === 'object' && v !== null && !Array.isArray(v), at, 'an object');
const str = (v, at) => need(typeof v === 'string', at, 'a string');
const name = (v, at) => need(typeof v === 'string' && v !== '', at, 'a non-empty string');
const is = (constant) => (v, at) => need(v === constant, at, JSON.stringify(constant));
const int = (min) => (v, at) => need(Number.isSafeInteger(v) && v >= min, at, `a safe integer >= ${min}`);
const hex = (v, at) => need(typeof v === 'string' && /^[0-9a-f]{64}$/.test(v), at, '64 lowercase hex digits');
// Node's base64 decoder skips characters it does not know, so only an exact re-encoding proves the text canonical.
const base64 = (bytes) => (v, at) =>
  need(
    typeof v === 'string' &&
      Buffer.from(v, 'base64').toString('base64') === v &&
      Buffer.from(v, 'base64').length === bytes,
    at,
    `canonical base64 of ${bytes} bytes`,
  );
const list = (item) => (v, at) => {
  need(Array.isArray(v), at, 'an array');
  v.forEach((x, i) => item(x, `${at}[${i}]`));
};
const obj = (spec) => (v, at) => {
  object(v, at);
  for (const k of Object.keys(v)) need(Object.hasOwn(spec, k), `${at}.${k}`, 'a known key');
  for (const [k, check] of Object.entries(spec))
    if (Object.hasOwn(v, k)) check(v[k], `${at}.${k}`);
    else bad(`${at}.${k} is missing`);
};
const checkShape = obj({
  checkpoint: obj({
    body: obj({
      format: is('colony-checkpoint'),
      heads: obj({ count: int(1), root: hex }),
      keyId: str,
      logId: hex,
      rootHash: hex,
      time: str,
      treeSize: int(1),
      version: is(1),
    }),
    signature: base64(64),
  }),
  events: list(
    obj({
      data: anyJson,
      hash: hex,
      meta: object,
      position: int(1),
      prevHash: hex,
      proof: list(hex),
      recordedAt: str,
      schemaVersion: int(1),
      streamId: name,
      type: name,
      version: int(1),
    }),
  ),
  format: is('colony-goal-bundle'),
  goalId: int(1),
  manifest: obj({
    body: obj({
      format: is('colony-goal-manifest'),
      goalId: int(1),
      logId: hex,
      rootHash: hex,
      streams: list(name),
      treeSize: int(1),
      version: is(1),
      withheld: list(obj({ reason: str, streamId: name })),
    }),
    signature: base64(64),
  }),
  publicKey: base64(32),
  snapshot: object, // checked only by step 8
  streams: list(obj({ hash: hex, index: int(0), proof: list(hex), streamId: name, version: int(1) })),
  version: is(2),
});

// Which other streams an event names: per event type, the data fields that hold a stream id and the stream kind.
// A path is dot-separated keys, `key[]` meaning each element of that array. Kind `principal` is a principal key
// (`user-N` or `agent-N`, the name of its stream; `system` names none); any other kind takes a positive integer id
// and names `<kind>-<id>`. `*` applies to every event. This is the table of src/evidence/bundle-refs.ts.
const REFERENCES = {
  '*': { 'notice.channelId': 'channel' },
  GoalCreated: { ownerId: 'user', channelId: 'channel', coordinatorAgentId: 'agent' },
  GoalActivated: { proposalId: 'proposal' },
  ChannelCreated: { ownerId: 'user', 'members[]': 'principal' },
  MessagePosted: { from: 'principal' },
  ReactionAdded: { by: 'principal' },
  ReactionRemoved: { by: 'principal' },
  MessagesRead: { principal: 'principal' },
  AgentRegistered: { ownerId: 'user', parentId: 'agent' },
  EvidenceRecorded: { ownerId: 'user' },
  TaskTreeProposed: { goalId: 'goal', ownerId: 'user', 'proposer.key': 'principal', channelId: 'channel' },
  AgentProposed: {
    goalId: 'goal',
    ownerId: 'user',
    parentTaskId: 'task',
    'proposer.key': 'principal',
    'proposer.agentId': 'agent',
    channelId: 'channel',
  },
  ProposalApproved: { 'by.key': 'principal', 'taskIds[]': 'task', agentId: 'agent' },
  ProposalRejected: { 'by.key': 'principal' },
  TaskCreated: {
    goalId: 'goal',
    ownerId: 'user',
    projectId: 'project',
    parentId: 'task',
    'ancestry[].id': 'task',
    'verifier.agent_id': 'agent',
    proposalId: 'proposal',
    channelId: 'channel',
    'by.key': 'principal',
  },
  TaskClaimed: { agentId: 'agent' },
  TaskStarted: { agentId: 'agent' },
  TaskCompleted: { agentId: 'agent' },
  TaskVerified: { goalId: 'goal', 'verifier.key': 'principal', assigneeAgentId: 'agent' },
  TaskReleased: { agentId: 'agent' },
  ClaimExpired: { agentId: 'agent' },
  TaskCancelled: { 'by.key': 'principal' },
  CostRecorded: { goalId: 'goal', 'by.key': 'principal', runId: 'run' },
  TaskDispatched: { 'by.key': 'principal' },
  TaskUpdated: { 'changes.projectId': 'project', 'by.key': 'principal' },
  TaskTimedOut: { agentId: 'agent', runId: 'run' },
  TaskBudgetAlertRaised: { goalId: 'goal' },
  RunQueued: { agentId: 'agent', ownerId: 'user', taskId: 'task', goalId: 'goal', 'wake.by': 'principal' },
  RunWakeMerged: { 'wake.by': 'principal' },
  RunRefused: { agentId: 'agent', ownerId: 'user', taskId: 'task', goalId: 'goal', 'wake.by': 'principal' },
  RunStarted: { agentId: 'agent' },
  RunLaunched: { agentId: 'agent' },
  RunFinished: { agentId: 'agent' },
  RunTimedOut: { agentId: 'agent' },
  RunFailed: { agentId: 'agent' },
};

// The values at `keys` (one per array element for `key[]`) inside JSON value `v`.
const valuesAt = (v, keys) => {
  if (keys.length === 0) return [v];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return [];
  const [key, ...rest] = keys;
  if (!key.endsWith('[]')) return Object.hasOwn(v, key) ? valuesAt(v[key], rest) : [];
  const items = Object.hasOwn(v, key.slice(0, -2)) ? v[key.slice(0, -2)] : null;
  return Array.isArray(items) ? items.flatMap((item) => valuesAt(item, rest)) : [];
};

// [{streamId, field}] for every stream event `e` names, each once, in the table's order.
// The paths of the table's event types are split once (a bundle holds many events of few types).
const split = new Map(
  Object.keys(REFERENCES).map((type) => [
    type,
    Object.entries({ ...REFERENCES['*'], ...REFERENCES[type] }).map(([path, kind]) => [path.split('.'), kind, path]),
  ]),
);
function namedStreams(e) {
  const found = new Map();
  for (const [keys, kind, path] of split.get(Object.hasOwn(REFERENCES, e.type) ? e.type : '*')) {
    for (const v of valuesAt(e.data, keys)) {
      let id;
      if (kind === 'principal') id = typeof v === 'string' && /^(user|agent)-[1-9][0-9]*$/.test(v) ? v : null;
      else id = Number.isSafeInteger(v) && v > 0 ? `${kind}-${v}` : null;
      if (id !== null && !found.has(id)) found.set(id, { streamId: id, field: `${e.type}.${path}` });
    }
  }
  return [...found.values()];
}

const utf8Order = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

// Runs steps 1 to 7 of the spec in order and throws a Failure at the first check that fails.
// `trusted` is a Set of fingerprints, or null when no trusted key was given.
function verifyBundle(bytes, trusted) {
  // 1. UTF-8, JSON, this format version, then byte-for-byte its own canonical form plus one LF (compared as bytes,
  //    so a BOM, duplicate keys or extra whitespace all fail), then the exact shape.
  let b;
  try {
    b = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes));
  } catch {
    bad('the file is not UTF-8 JSON');
  }
  // Version 1 had no signed list of the goal's streams, so a whole stream could be dropped from it unnoticed.
  if (typeof b === 'object' && b !== null && b.format === 'colony-goal-bundle' && typeof b.version === 'number') {
    if (b.version === 1)
      fail(
        'unsupported_version',
        'format version 1 cannot show that no stream of the goal was left out; export it again',
      );
    if (b.version !== 2) fail('unsupported_version', `format version ${b.version} is not 2, the one this tool checks`);
  }
  try {
    if (!Buffer.from(`${canonicalize(b)}\n`, 'utf8').equals(bytes)) throw new Error('not canonical');
  } catch {
    bad('the file is not RFC 8785 canonical JSON followed by exactly one LF');
  }
  checkShape(b, 'bundle');
  const body = b.checkpoint.body;

  // 2. The key named in the checkpoint must be the key in the bundle, and one the caller trusts if any were given.
  const publicKey = Buffer.from(b.publicKey, 'base64');
  const keyId = fingerprint(publicKey);
  if (body.keyId !== keyId) fail('bad_key', `keyId ${body.keyId} is not the fingerprint of publicKey (${keyId})`);
  if (trusted && !trusted.has(keyId)) fail('untrusted_key', `publicKey ${keyId} is not one of the trusted keys`);

  // 3. The signature covers the UTF-8 bytes of canonicalize(body).
  let signed = false;
  let key = null;
  try {
    key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: publicKey.toString('base64url') },
      format: 'jwk',
    });
    signed = verifySignature(
      null,
      Buffer.from(canonicalize(body), 'utf8'),
      key,
      Buffer.from(b.checkpoint.signature, 'base64'),
    );
  } catch {
    /* a key Node cannot load verifies nothing */
  }
  if (!signed) fail('bad_signature', 'the checkpoint signature does not verify with publicKey');

  //    The manifest (which streams are the goal's, which its events name but the bundle withholds, and why) is
  //    signed by the same key over canonicalize(manifest.body), and is about this goal at this checkpoint.
  const manifest = b.manifest.body;
  let manifestSigned = false;
  try {
    manifestSigned = verifySignature(
      null,
      Buffer.from(canonicalize(manifest), 'utf8'),
      key,
      Buffer.from(b.manifest.signature, 'base64'),
    );
  } catch {
    /* as above */
  }
  if (!manifestSigned) fail('bad_signature', 'the manifest signature does not verify with publicKey');
  if (manifest.goalId !== b.goalId) fail('bad_manifest', `the manifest is about goal ${manifest.goalId}`);
  for (const k of ['logId', 'treeSize', 'rootHash'])
    if (manifest[k] !== body[k]) fail('bad_manifest', `the manifest's ${k} is not the checkpoint's`);
  for (const [what, ids] of [
    ['streams', manifest.streams],
    ['withheld', manifest.withheld.map((w) => w.streamId)],
  ]) {
    ids.forEach((id, i) => {
      if (i > 0 && utf8Order(ids[i - 1], id) >= 0)
        fail('bad_manifest', `the manifest's ${what} are not strictly sorted by UTF-8 bytes`, { streamId: id });
    });
  }
  const inManifest = new Set(manifest.streams);
  const withheld = new Set(manifest.withheld.map((w) => w.streamId));
  for (const id of withheld)
    if (inManifest.has(id)) fail('bad_manifest', 'the manifest both lists and withholds it', { streamId: id });

  // 4. Each stream head is a leaf of the signed heads tree. The list must be strictly sorted by UTF-8 bytes and
  //    must include the goal's own stream.
  const heads = new InclusionVerifier(Buffer.from(body.heads.root, 'hex'), body.heads.count);
  b.streams.forEach((s, i) => {
    const where = { streamId: s.streamId };
    if (i > 0 && Buffer.compare(Buffer.from(b.streams[i - 1].streamId), Buffer.from(s.streamId)) >= 0) {
      bad('streams are not strictly sorted by the UTF-8 bytes of streamId', where);
    }
    const leaf = leafHash(
      Buffer.from(canonicalize({ hash: s.hash, streamId: s.streamId, version: s.version }), 'utf8'),
    );
    if (
      !heads.verify(
        s.index,
        leaf,
        s.proof.map((h) => Buffer.from(h, 'hex')),
      )
    ) {
      fail('bad_head_proof', `the head (version ${s.version}) is not leaf ${s.index} of the signed heads tree`, where);
    }
  });
  const goalStream = `goal-${b.goalId}`;
  if (!b.streams.some((s) => s.streamId === goalStream))
    bad("the goal's own stream is not in streams", { streamId: goalStream });
  //    The bundle carries exactly the streams the signed manifest lists: none slipped in, none dropped whole.
  for (const s of b.streams)
    if (!inManifest.has(s.streamId))
      fail('foreign_stream', "the manifest does not list it as one of the goal's streams", { streamId: s.streamId });
  const carried = new Set(b.streams.map((s) => s.streamId));
  for (const id of manifest.streams)
    if (!carried.has(id))
      fail('missing_stream', "the manifest lists it as one of the goal's streams, but the bundle does not carry it", {
        streamId: id,
      });

  // 5. Each event is checked against its own hash, the signed log tree, its stream's versions, and the hash chain.
  const log = new InclusionVerifier(Buffer.from(body.rootHash, 'hex'), body.treeSize);
  const listed = new Set(b.streams.map((s) => s.streamId));
  const lastOf = new Map(); // streamId -> the stream's latest event seen so far
  let prev = null;
  for (const e of b.events) {
    const where = { position: e.position };
    if (prev && e.position <= prev.position) fail('event_out_of_order', `it follows position ${prev.position}`, where);
    if (e.position > body.treeSize) fail('beyond_checkpoint', `the checkpoint's treeSize is ${body.treeSize}`, where);
    if (!listed.has(e.streamId)) fail('foreign_stream', `stream ${e.streamId} is not in streams`, where);
    const { hash, proof, ...row } = e; // the hashed row is the event without `hash` and `proof`
    if (
      createHash('sha256')
        .update(e.prevHash + canonicalize(row), 'utf8')
        .digest('hex') !== hash
    ) {
      fail('event_hash_mismatch', 'the recomputed event hash differs from hash', where);
    }
    if (
      !log.verify(
        e.position - 1,
        leafHash(Buffer.from(hash, 'hex')),
        proof.map((h) => Buffer.from(h, 'hex')),
      )
    ) {
      fail('bad_inclusion_proof', `the proof does not lead from leaf ${e.position - 1} to rootHash`, where);
    }
    const before = lastOf.get(e.streamId)?.version ?? 0;
    if (e.version !== before + 1)
      fail('missing_event', `stream ${e.streamId} goes from version ${before} to ${e.version}`, where);
    if (prev && prev.position === e.position - 1 && prev.hash !== e.prevHash) {
      fail('broken_link', 'prevHash is not the hash of the event at the previous position', where);
    }
    lastOf.set(e.streamId, e);
    prev = e;
  }

  // 6. The bundle must hold each stream up to its signed head. Since step 5 made versions contiguous from 1, the
  //    event at the head's version is the stream's last event. A version beyond the head also counts as a mismatch,
  //    because it would be a later event of the stream at or before treeSize.
  for (const s of b.streams) {
    const last = lastOf.get(s.streamId) ?? { version: 0 };
    const where = { streamId: s.streamId };
    const than = `the bundle ends the stream at version ${last.version}, its signed head is version ${s.version}`;
    if (last.version < s.version) fail('missing_event', than, where);
    if (last.version > s.version) fail('head_mismatch', than, where);
    if (last.hash !== s.hash)
      fail('head_mismatch', `the event at version ${s.version} does not have the head's hash`, where);
  }

  // 7. Every stream an event names (REFERENCES: ProposalApproved.taskIds, TaskCreated.parentId, RunQueued.taskId…)
  //    is carried, or withheld by the signed manifest with its reason.
  for (const e of b.events)
    for (const { streamId, field } of namedStreams(e))
      if (!carried.has(streamId) && !withheld.has(streamId))
        fail(
          'missing_stream',
          `${field} of event ${e.position} names it, and the bundle neither carries nor withholds it`,
          { streamId },
        );
  return { goalId: b.goalId, events: b.events.length, streams: b.streams.length, body, keyId };
}

// Command line. Text from the bundle is hostile, so no control character reaches the terminal. Human-readable lines
// drop them, and the bidi controls that could reorder a line. JSON output escapes them, which keeps values exact: JSON.stringify already escapes C0, and DEL and C1
// can only occur inside strings, so writing them as \u escapes loses nothing.
const clean = (s) => String(s).replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '');
const jsonLine = (o) =>
  `${JSON.stringify(o).replace(/[\u007f-\u009f]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)}\n`;
class UsageError extends Error {}
const usage = (message) => {
  throw new UsageError(message);
};

// A trusted KEY (a base64 public key or a SHA256: fingerprint), returned as a fingerprint.
function parseKey(text, from) {
  const fp = /^SHA256:([A-Za-z0-9+/]{43})$/.exec(text);
  if (fp && Buffer.from(fp[1], 'base64').toString('base64') === `${fp[1]}=`) return text;
  const raw = Buffer.from(text, 'base64');
  if (raw.toString('base64') === text && raw.length === 32) return fingerprint(raw);
  return usage(`${from}: ${JSON.stringify(text)} is neither a base64 Ed25519 public key nor a SHA256: fingerprint`);
}

function readKeyFile(file) {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    usage(`cannot read key file ${file}: ${e.code ?? e.message}`);
  }
  let keys = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (text.trimStart().startsWith('{')) {
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      usage(`key file ${file} is not valid JSON`);
    }
    keys = [json?.publicKey, ...(Array.isArray(json?.keys) ? json.keys.map((k) => k?.publicKey) : [])].filter(
      (k) => k !== undefined,
    );
    if (keys.some((k) => typeof k !== 'string')) usage(`key file ${file}: a "publicKey" is not a string`);
  }
  if (keys.length === 0) usage(`key file ${file} holds no key (JSON needs "publicKey" or "keys": [{"publicKey"}])`);
  return keys.map((k) => parseKey(k, file));
}

function parseArgs(argv) {
  const opts = { file: null, trusted: null, json: false };
  const trust = (fps) => {
    opts.trusted = new Set([...(opts.trusted ?? []), ...fps]);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${arg} needs a value`));
    if (arg === '--json') opts.json = true;
    else if (arg === '--key') trust([parseKey(value(), '--key')]);
    else if (arg === '--key-file') trust(readKeyFile(value()));
    else if (arg.startsWith('-') || opts.file !== null) usage(`unexpected argument ${arg}`);
    else opts.file = arg;
  }
  if (opts.file === null) usage('usage: node tools/verify-bundle.mjs FILE [--key KEY]... [--key-file F] [--json]');
  try {
    opts.bytes = readFileSync(opts.file);
  } catch (e) {
    usage(`cannot read ${opts.file}: ${e.code ?? e.message}`);
  }
  return opts;
}

function main(argv) {
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`verify-bundle: ${clean(e.message)}\n`);
    return 2;
  }
  try {
    const {
      goalId,
      events,
      streams,
      body: { treeSize, rootHash, time },
      keyId,
    } = verifyBundle(opts.bytes, opts.trusted);
    if (!opts.trusted) {
      process.stderr.write(
        `verify-bundle: warning: the bundle's key ${keyId} was not checked against a trusted key (see --key)\n`,
      );
    }
    process.stdout.write(
      opts.json
        ? jsonLine({
            ok: true,
            goalId,
            events,
            streams,
            checkpoint: { treeSize, rootHash, time },
            keyId,
            trusted: !!opts.trusted,
          })
        : `ok: goal ${goalId}, ${events} events in ${streams} streams, checkpoint of ${treeSize} events (root ${rootHash}) ` +
            `signed at ${clean(time)} by ${keyId}\n`,
    );
    return 0;
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    const { position, streamId } = e.where;
    const about =
      position !== undefined ? ` at event ${position}` : streamId !== undefined ? ` for stream ${streamId}` : '';
    process.stderr.write(`verify-bundle: ${clean(`${e.code}${about}: ${e.message}`)}\n`);
    if (opts.json)
      process.stdout.write(
        jsonLine({ ok: false, failure: { code: e.code, position, streamId, message: clean(e.message) } }),
      );
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
