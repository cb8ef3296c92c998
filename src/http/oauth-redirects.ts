import { allVisible, HIDDEN_CHAR } from '../terminal.js';

/**
 * What a client may register — its name and its redirect URIs — which requested redirect matches a
 * registered one, and the redirects Colony sends back (RFC 6749 §4.1.2 with RFC 9207's `iss`, so a
 * client talking to several authorization servers can tell whose answer it holds).
 */
export const MAX_CLIENT_NAME = 200;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** A native app's private-use scheme: a domain it owns, reversed (`com.example.app:`), so at least one dot. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+:$/;
/**
 * Native MCP clients that register a dotless scheme of their own (Cursor sends `cursor://anysphere…/oauth/…`),
 * accepted by name; COLONY_OAUTH_SCHEMES (comma-separated, e.g. `myapp,otherapp`) adds more. Each names
 * one app, never a handler of the operating system's (ms-msdt:, search-ms:, view-source:, file:…).
 */
const KNOWN_APP_SCHEMES = ['cursor', 'vscode', 'vscode-insiders', 'windsurf', 'zed'];
const APP_SCHEME = /^[a-z][a-z0-9+.-]*$/;
function appSchemes(env: NodeJS.ProcessEnv = process.env): Set<string> {
  const extra = (env.COLONY_OAUTH_SCHEMES ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase().replace(/:$/, ''))
    .filter((s) => APP_SCHEME.test(s));
  return new Set([...KNOWN_APP_SCHEMES, ...extra].map((s) => `${s}:`));
}

/**
 * Why a redirect URI cannot be registered or used, or null. An allowlist, since the browser hands any
 * other scheme to whatever the operating system registered for it (`ms-msdt:`, `search-ms:`,
 * `view-source:`, `javascript:`…): https anywhere, http only to loopback (RFC 8252 §7.3), a native
 * app's reverse-DNS private-use scheme (§7.1, `com.example.app:/callback`) or a known MCP client's own
 * scheme (above); never a fragment.
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
  if (url.protocol === 'https:' || PRIVATE_USE_SCHEME.test(url.protocol) || appSchemes().has(url.protocol)) return null;
  if (url.protocol === 'http:')
    return LOOPBACK_HOSTS.has(url.hostname) ? null : 'plain http is allowed only to 127.0.0.1, localhost or [::1]';
  return (
    `the ${url.protocol.slice(0, 40)} scheme is refused: a redirect URI is https, http to a loopback address, ` +
    `a native app's own reverse-DNS scheme such as com.example.app: (RFC 8252 §7.1), or a known MCP client's ` +
    `(${[...appSchemes()].join(' ')}; COLONY_OAUTH_SCHEMES adds one)`
  );
}

/** Why a client name cannot be registered, or null: at most MAX_CLIENT_NAME characters, every one of them visible. */
export function checkClientName(name: string): string | null {
  if (name.length > MAX_CLIENT_NAME) return `client_name is at most ${MAX_CLIENT_NAME} characters`;
  const hidden = HIDDEN_CHAR.exec(name)?.[0];
  if (hidden === undefined) return null;
  const at = `U+${hidden.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return `client_name contains ${at}, a control, bidirectional or invisible character: a name must show what it says`;
}

/**
 * A client name as every page and the CLI show it: each hidden character as a visible `\uXXXX` escape (the
 * terminal's form, src/terminal.ts). New names cannot hold one (checkClientName); a client logged by an
 * older Colony may.
 */
export const shownClientName = allVisible;

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
