/**
 * Secret values out of process output (DESIGN §3.11, §3.13): a command verifier's output tail is kept in
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
  const secrets = [...new Set(values)].filter((v) => v.length >= MIN_REDACTED).sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return text;
  if (tail.length >= maxBytes) text = maskLeadingFragment(text, secrets);
  for (const v of secrets) text = text.split(v).join(MASK);
  return text;
}

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
