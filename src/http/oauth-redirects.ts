/**
 * Redirect URIs: which may be registered, which requested one matches a registered one, and the
 * redirects Colony sends back (RFC 6749 §4.1.2 with RFC 9207's `iss`, so a client talking to several
 * authorization servers can tell whose answer it holds).
 */
export const MAX_CLIENT_NAME = 200;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const REFUSED_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'http:']);

/**
 * Why a redirect URI cannot be registered, or null: https anywhere, http only to loopback (RFC 8252
 * §7.3), or an app's private-use scheme (§7.1, `cursor://…`); never a fragment or a script scheme.
 */
export function checkRedirectUri(raw: string): string | null {
  if (raw.length > 2000) return 'a redirect URI is at most 2000 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw.slice(0, 100)}" is not an absolute URI`;
  }
  if (url.hash !== '' || raw.includes('#')) return 'a redirect URI has no fragment';
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  if (REFUSED_SCHEMES.has(url.protocol))
    return url.protocol === 'http:'
      ? 'plain http is allowed only to 127.0.0.1, localhost or [::1]'
      : `the ${url.protocol} scheme is refused`;
  return null;
}

/** Exact match, except that a loopback http redirect may come back on any port (RFC 8252 §7.3: native apps bind an ephemeral one). */
export function redirectMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  if (requested.includes('#')) return false;
  try {
    const a = new URL(registered);
    const b = new URL(requested);
    return (
      a.protocol === 'http:' &&
      b.protocol === 'http:' &&
      LOOPBACK_HOSTS.has(a.hostname) &&
      a.hostname === b.hostname &&
      a.pathname === b.pathname &&
      a.search === b.search &&
      b.username === '' &&
      b.password === ''
    );
  } catch {
    return false;
  }
}

/** The redirect carrying `params` (code or error), the client's `state` and Colony's `iss`. */
export function redirectWith(
  redirectUri: string,
  params: Record<string, string>,
  state: string | null,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (state !== null) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return url.href;
}

/** What a form-action CSP needs to allow for the browser to follow the redirect: its origin, or its scheme for an app's own. */
export function redirectSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

/** What the page shows as where the client sends the browser back: the host, or the app's scheme. */
export function redirectHost(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : `${url.protocol}//${url.host}`;
}
