import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) equals the challenge; the verifier is 43-128 unreserved characters. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
