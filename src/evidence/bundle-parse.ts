import { canonicalize } from '../canonical.js';
import { BUNDLE_FORMAT, BUNDLE_VERSION, type Bundle } from './bundle.js';
import { fail } from './bundle-failure.js';
import { shapeProblem } from './bundle-shape.js';

// Strict: a byte that is not UTF-8 would otherwise decode to U+FFFD and hide; a BOM is kept (and fails).
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * JSON.parse keeps an object's keys in the order of the text, except integer-like keys ("7", "10"), which
 * V8 puts first, in numeric order. So for a text without such keys whose every object has its keys sorted,
 * JSON.stringify of what it parsed to is the canonical form — V8's native serializer, several times faster
 * than canonicalize, which stays for the rest.
 */
const INTEGER_KEY = /"(?:0|[1-9]\d*)":/;

function keysSorted(root: unknown): boolean {
  const stack = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      if (i > 0 && !(keys[i - 1]! < keys[i]!)) return false;
      stack.push((v as Record<string, unknown>)[keys[i]!]);
    }
  }
  return true;
}

/**
 * Check 1 of a goal bundle (`bad_format`): the file is UTF-8, JSON, a bundle of this format version
 * (`unsupported_version` otherwise), of the exact bundle shape, and its own RFC 8785 canonical form followed
 * by one newline. Returns the bundle and the serializer the event hashes may use for it.
 */
export function parseBundle(bytes: Buffer): { bundle: Bundle; serialize: (value: unknown) => string } {
  let value: unknown;
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return fail('bad_format', 'the file is not UTF-8');
  }
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail('bad_format', `not JSON: ${(e as Error).message}`);
  }
  checkVersion(value);
  const problem = shapeProblem(value);
  if (problem) fail('bad_format', problem);
  const serialize = INTEGER_KEY.test(text) || !keysSorted(value) ? canonicalize : (v: unknown) => JSON.stringify(v);
  let canonical: string;
  try {
    canonical = serialize(value);
  } catch (e) {
    return fail('bad_format', `cannot be canonicalized: ${(e as Error).message}`); // e.g. nested too deeply for the stack
  }
  if (`${canonical}\n` !== text)
    fail('bad_format', 'the file is not its own RFC 8785 canonical JSON followed by one newline');
  return { bundle: value as Bundle, serialize };
}

/**
 * A bundle of another format version is named as such before its shape is checked. Version 1 is refused
 * rather than read: it carries no signed list of the goal's streams, so whole streams could be dropped from
 * it unnoticed.
 */
function checkVersion(value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const { format, version } = value as Record<string, unknown>;
  if (format !== BUNDLE_FORMAT || typeof version !== 'number' || version === BUNDLE_VERSION) return; // else bad_format
  if (version === 1)
    fail(
      'unsupported_version',
      `format version 1 cannot show that no stream of the goal was left out; export the goal again (version ${BUNDLE_VERSION})`,
    );
  fail('unsupported_version', `format version ${version} is not ${BUNDLE_VERSION}, the one this verifier checks`);
}
