/**
 * Secret values out of process output: a command verifier's output tail is kept in
 * the log (TaskVerified) and shown to the coordinator, so every injected value is replaced by `***`
 * before it is recorded. The tail is the last N bytes of the output, so it may begin in the middle of a
 * value: a leading fragment that is the end of a value is masked too. Values shorter than
 * MIN_REDACTED characters are left alone (masking every `1` or `ab` would garble the output and hide
 * nothing worth hiding).
 */
export const MASK = '***';
export const MIN_REDACTED = 3;

export function redactOutput(tail: Buffer, values: readonly string[], maxBytes: number): string {
  let text = tail.toString('utf8');
  const literal = values.filter((v) => v.length >= MIN_REDACTED);
  const secrets = [...new Set([...literal, ...literal.flatMap(encodingsOf)])]
    .filter((v) => v.length >= MIN_REDACTED)
    .sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return text;
  if (tail.length >= maxBytes) text = maskLeadingFragment(text, secrets);
  for (const v of secrets) text = text.split(v).join(MASK);
  return text;
}

/**
 * The common encodings a process might print a value in: base64 (standard, unpadded, URL-safe, wrapped at
 * 76 columns as base64(1) does, and the part of it that is the same whatever bytes precede the value),
 * hex in either case, and URL/form encoding. A courtesy, not a boundary (docs/security.md: Secrets): any
 * other transformation (rot13, reversed, split) goes through, so what matters is who gets the secret.
 */
const MIN_ENCODED = 8;
export function encodingsOf(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const b64 = bytes.toString('base64');
  const out = [
    b64,
    b64.replace(/=+$/, ''),
    bytes.toString('base64url'),
    wrap(b64, 76),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    encodeURIComponent(value),
    encodeURIComponent(value).replaceAll('%20', '+'),
  ];
  for (const k of [1, 2]) {
    // Preceded by k bytes, the value's base64 starts ceil(8k/6) characters in and is fixed up to its last whole 6-bit group.
    const shifted = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    out.push(shifted.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6)));
  }
  out.push(b64.slice(0, Math.floor((8 * bytes.length) / 6)));
  return [...new Set(out)].filter((e) => e !== value && e.length >= MIN_ENCODED);
}

const wrap = (text: string, width: number): string => text.replace(new RegExp(`(.{${width}})(?=.)`, 'g'), '$1\n');

/** A truncated tail that starts with the last k characters of a value (k < its length): mask them. */
function maskLeadingFragment(text: string, secrets: readonly string[]): string {
  const body = text.replace(/^\uFFFD+/, ''); // a cut through a multi-byte character
  let longest = 0;
  for (const v of secrets) {
    for (let k = Math.min(v.length - 1, body.length); k > longest; k -= 1) {
      if (body.startsWith(v.slice(v.length - k))) {
        longest = k;
        break;
      }
    }
  }
  return longest > 0 ? MASK + body.slice(longest) : text;
}
