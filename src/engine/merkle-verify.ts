import { nodeHash } from './merkle.js';

/**
 * Checking Merkle proofs (RFC 9162 §2.1.3.2 and §2.1.4.2) with nothing but hashes. tools/verify-bundle.mjs
 * has the same algorithms in plain JavaScript, for auditors who do not run Colony's code.
 *
 * A bundle holds one inclusion proof per event, and the events of one goal sit close together in the log,
 * so their proofs share most of their upper nodes. `InclusionVerifier` remembers every node of a proof it
 * accepted, keyed by (level, index) in the one tree it checks against; a later proof reuses a parent when
 * both children are ones it verified — no hash needed — and every sibling it carries must still equal the
 * verified node at its place. So a changed byte anywhere in any proof still fails, and a goal's proofs cost
 * a few hashes each instead of log2(n).
 */
export class InclusionVerifier {
  private readonly known = new Map<string, Buffer>();

  constructor(
    readonly root: Buffer,
    readonly size: number,
  ) {}

  /** True when `leaf` (a leaf hash) is the leaf at `index` of the tree this verifier holds. */
  verify(index: number, leaf: Buffer, path: readonly Buffer[]): boolean {
    if (!(Number.isSafeInteger(index) && index >= 0 && index < this.size)) return false;
    let fn = index;
    let sn = this.size - 1;
    let level = 0;
    let r = leaf;
    const seen: [string, Buffer][] = [[`0:${fn}`, leaf]];
    for (const p of path) {
      if (sn === 0) return false;
      // The last node of a level with no right sibling moves up unchanged (the ragged right edge).
      if (fn === sn && fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
          level += 1;
        }
      }
      const left = fn % 2 === 1;
      const siblingKey = `${level}:${left ? fn - 1 : fn + 1}`;
      const parentKey = `${level + 1}:${Math.floor(fn / 2)}`;
      const known = this.known.get(parentKey);
      const reuse = known && this.known.get(`${level}:${fn}`)?.equals(r) && this.known.get(siblingKey)?.equals(p);
      r = reuse ? known : left ? nodeHash(p, r) : nodeHash(r, p);
      seen.push([siblingKey, p], [parentKey, r]);
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
      level += 1;
    }
    if (sn !== 0 || !r.equals(this.root)) return false;
    for (const [key, hash] of seen) this.known.set(key, hash);
    return true;
  }
}

/** One inclusion proof on its own (no memory between calls). */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Buffer,
  path: readonly Buffer[],
  root: Buffer,
): boolean {
  return new InclusionVerifier(root, size).verify(index, leaf, path);
}

/** RFC 9162 §2.1.4.2: true when the tree (`fromSize`, `fromRoot`) is a prefix of the tree (`toSize`, `toRoot`). */
export function verifyConsistency(
  fromSize: number,
  toSize: number,
  fromRoot: Buffer,
  toRoot: Buffer,
  proof: readonly Buffer[],
): boolean {
  if (!(Number.isSafeInteger(fromSize) && Number.isSafeInteger(toSize) && fromSize >= 0 && fromSize <= toSize))
    return false;
  if (fromSize === toSize) return proof.length === 0 && fromRoot.equals(toRoot);
  if (fromSize === 0) return proof.length === 0; // the empty tree is a prefix of every tree
  if (proof.length === 0) return false;
  const path = (fromSize & (fromSize - 1)) === 0 ? [fromRoot, ...proof] : [...proof];
  let fn = fromSize - 1;
  let sn = toSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(fromRoot) && sr.equals(toRoot);
}
