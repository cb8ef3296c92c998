import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { ClientInfo } from '../actions/oauth.js';
import { checkClientName, checkRedirectUri, MAX_CLIENT_NAME } from './oauth-redirects.js';

/**
 * Client ID Metadata Documents (MCP 2025-11-25, draft-ietf-oauth-client-id-metadata-document): a client
 * whose client_id is an https URL publishes its metadata there, and Colony fetches it. Anyone can make
 * Colony fetch a URL this way, so the fetch is narrow: https only (plain http to loopback only with
 * COLONY_OAUTH_ALLOW_HTTP_CLIENT_IDS=1, for tests and local clients), no IP-literal or localhost hosts
 * otherwise, no redirects followed at all (a document elsewhere cannot vouch for this URL), 5 s, 64 KiB.
 * The document must name itself (`client_id` equal to the URL), its redirect URIs and its name.
 * Results are cached 5 minutes. A host name that resolves to a private, loopback, link-local or other
 * non-public address is refused before the fetch, so a client_id cannot aim Colony at the network it
 * sits in (the resolver may answer differently a moment later — a rebinding window that an outbound
 * proxy closes; this check keeps the plain case out).
 */
export const CIMD_MAX_BYTES = 64 * 1024;
export const CIMD_TIMEOUT_MS = 5_000;
const CACHE_MS = 5 * 60_000;
const CACHE_CAP = 100;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export class CimdError extends Error {}

export const allowHttpClientIds = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env.COLONY_OAUTH_ALLOW_HTTP_CLIENT_IDS === '1';

/** Whether a client_id is meant as a metadata document URL (else it is a registered id). */
export const isUrlClientId = (clientId: string): boolean => /^https?:\/\//i.test(clientId);

export class MetadataDocuments {
  private readonly cache = new Map<string, { info: ClientInfo; at: number }>();

  constructor(private readonly allowHttp: () => boolean = allowHttpClientIds) {}

  async fetch(clientId: string): Promise<ClientInfo> {
    const url = checkUrl(clientId, this.allowHttp());
    const hit = this.cache.get(clientId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.info;
    if (!this.allowHttp()) await refuseInternalHost(url.hostname);
    const info = await fetchDocument(url, clientId);
    if (this.cache.size >= CACHE_CAP) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { info, at: Date.now() });
    return info;
  }
}

function checkUrl(clientId: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new CimdError('the client_id is not a URL');
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol === 'http:' ? !(allowHttp && loopback) : url.protocol !== 'https:')
    throw new CimdError('a client_id URL must be https');
  if (!allowHttp && (loopback || /^[\d.]+$/.test(url.hostname) || url.hostname.startsWith('[')))
    throw new CimdError('a client_id URL must name a host, not an address');
  if (url.pathname === '/' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new CimdError('a client_id URL needs a path and no fragment or credentials');
  if (url.href !== clientId) throw new CimdError('a client_id URL must be in normal form');
  return url;
}

/** Addresses no public metadata document lives at (RFC 6890 special-purpose blocks, both families). */
const INTERNAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  INTERNAL.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(net, bits, 'ipv6');

export async function refuseInternalHost(hostname: string): Promise<void> {
  let addresses: { address: string; family: number }[];
  try {
    addresses = await lookup(hostname, { all: true, verbatim: true });
  } catch {
    throw new CimdError("the client_id URL's host does not resolve");
  }
  for (const { address } of addresses) {
    if (INTERNAL.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4'))
      throw new CimdError("the client_id URL's host resolves to a private or local address");
  }
}

async function fetchDocument(url: URL, clientId: string): Promise<ClientInfo> {
  let text: string;
  try {
    const res = await fetch(url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(CIMD_TIMEOUT_MS),
      headers: { accept: 'application/json' },
    });
    if (res.status >= 300 && res.status < 400)
      throw new CimdError('the client metadata document redirects elsewhere; redirects are not followed');
    if (res.status !== 200) throw new CimdError(`fetching the client metadata document answered HTTP ${res.status}`);
    text = await readCapped(res);
  } catch (e) {
    if (e instanceof CimdError) throw e;
    throw new CimdError(
      `the client metadata document could not be fetched (${(e as Error).name === 'TimeoutError' ? 'no answer in 5 s' : 'network error'})`,
    );
  }
  return parseDocument(clientId, text);
}

async function readCapped(res: Response): Promise<string> {
  if (Number(res.headers.get('content-length') ?? 0) > CIMD_MAX_BYTES)
    throw new CimdError('the client metadata document is larger than 64 KiB');
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > CIMD_MAX_BYTES) throw new CimdError('the client metadata document is larger than 64 KiB');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseDocument(clientId: string, text: string): ClientInfo {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new CimdError('the client metadata document is not JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CimdError('the client metadata document is not a JSON object');
  if (doc.client_id !== clientId)
    throw new CimdError('the client metadata document names another client_id than its URL');
  const name = doc.client_name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_CLIENT_NAME)
    throw new CimdError(`the client metadata document needs a client_name of 1-${MAX_CLIENT_NAME} characters`);
  const badName = checkClientName(name);
  if (badName) throw new CimdError(`the client metadata document's ${badName}`);
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10)
    throw new CimdError('the client metadata document needs 1-10 redirect_uris');
  for (const u of uris) {
    const problem = typeof u === 'string' ? checkRedirectUri(u) : 'a redirect URI is a string';
    if (problem) throw new CimdError(`the client metadata document's redirect_uris: ${problem}`);
  }
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    throw new CimdError('Colony accepts public clients only (token_endpoint_auth_method "none")');
  return { clientId, kind: 'cimd', clientName: name, redirectUris: uris as string[] };
}
