import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type Server } from '@modelcontextprotocol/server';
import { DomainError } from '../errors.js';
import { APPROVAL_CARD_URI, approvalCardContents, approvalCardEntry, approvalCardHtml } from './apps/approval-card.js';
import type { CurrentCaller } from './auth.js';
import type { McpContext } from './context.js';
import { getPrompt, listPrompts } from './prompts/index.js';
import { listResources, readResource, RESOURCE_TEMPLATES, type ResourceContents } from './resources/index.js';
import { watchOf } from './resource-watch.js';
import { parseResourceUri, uriOf } from './resources/uris.js';
import { type Caller } from '../events/principals.js';

/**
 * Resources and prompts on one MCP server, for both revisions: the data comes from src/mcp/resources
 * and src/mcp/prompts (scoped exactly like the read tools); this file only speaks the protocol. Domain
 * errors become the protocol's: not found → -32002 (resources) or invalid params, a bad URI or argument
 * → invalid params, no token → invalid request. 2025 sessions subscribe per URI here; 2026-07-28
 * clients use `subscriptions/listen`, served by the SDK over the same watch (http/mcp.ts).
 */
export function registerResourcesAndPrompts(
  server: Server,
  ctx: McpContext,
  currentCaller: CurrentCaller,
  pushUpdates = false,
): void {
  const who = (extra: Parameters<CurrentCaller>[0]): Caller => {
    const caller = currentCaller(extra);
    if (!caller) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'the token is unknown, expired or revoked');
    return caller;
  };
  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: RESOURCE_TEMPLATES.map((t) => ({ ...t })),
  }));
  approvalCardHtml(); // built at start: a missing or reshaped ext-apps package fails here, not at the owner's first card
  // Reads answer once what they saw is on disk (a batch may be committed but still syncing: engine/wal-sync.ts).
  const read = <T>(fn: () => T): Promise<T> => ctx.app.engine.group.read(fn);
  server.setRequestHandler('resources/list', (request, extra) =>
    read(() =>
      protocolErrors(() => {
        const caller = who(extra);
        return withApprovalCard(caller, request.params?.cursor, listResources(ctx, caller, request.params?.cursor));
      }),
    ),
  );
  server.setRequestHandler('resources/read', (request, extra) =>
    read(() => protocolErrors(() => ({ contents: readAny(ctx, who(extra), request.params.uri) }), request.params.uri)),
  );
  server.setRequestHandler('prompts/list', (_request, extra) => ({ prompts: listPrompts(who(extra)) }));
  server.setRequestHandler('prompts/get', (request, extra) =>
    read(() =>
      protocolErrors(() => ({
        ...getPrompt(ctx, who(extra), request.params.name, (request.params.arguments ?? {}) as Record<string, string>),
      })),
    ),
  );

  registerSubscriptions(server, ctx, currentCaller, who, pushUpdates);
}

/** Resource subscriptions: per URI for 2025 sessions, or every readable change on a 2026-07-28 stdio connection. */
function registerSubscriptions(
  server: Server,
  ctx: McpContext,
  currentCaller: CurrentCaller,
  who: (extra: Parameters<CurrentCaller>[0]) => Caller,
  pushUpdates: boolean,
): void {
  // 2025-era subscriptions live as long as the session's server: one watcher for its set of URIs.
  const subscribed = new Set<string>();
  let stopWatching: (() => void) | null = null;
  server.setRequestHandler('resources/subscribe', (request, extra) =>
    protocolErrors(() => {
      const caller = who(extra);
      readAny(ctx, caller, request.params.uri); // only what the caller can read now
      // One entry per resource however it is spelled (colony://agents/%77orker is worker), and a bound per session.
      const uri = canonicalUri(request.params.uri);
      if (!subscribed.has(uri) && subscribed.size >= SUBSCRIPTIONS_PER_SESSION) {
        throw new DomainError(
          'ErrInvalidInput',
          `a session holds at most ${SUBSCRIPTIONS_PER_SESSION} resource subscriptions; unsubscribe from one first`,
        );
      }
      subscribed.add(uri);
      stopWatching ??= watchOf(ctx).add({
        caller: () => currentCaller(extra),
        uris: subscribed,
        updated: (uri) => void server.sendResourceUpdated({ uri }).catch(() => undefined),
        listChanged: () => void server.sendResourceListChanged().catch(() => undefined),
      });
      return {};
    }, request.params.uri),
  );
  server.setRequestHandler('resources/unsubscribe', (request) => {
    subscribed.delete(canonicalUri(request.params.uri));
    return {};
  });
  // A 2026-07-28 stdio connection: every readable change goes out; the SDK's stdio entry keeps only what
  // an open listen stream asked for. (A discarded server/discover probe instance may never close: its
  // watcher then lives as long as the process — one stdio connection — and its sends go nowhere.)
  if (pushUpdates) {
    stopWatching = watchOf(ctx).add({
      caller: () => currentCaller({}),
      updated: (uri) => void server.sendResourceUpdated({ uri }).catch(() => undefined),
      listChanged: () => void server.sendResourceListChanged().catch(() => undefined),
    });
  }
  const previous = server.onclose;
  server.onclose = () => {
    stopWatching?.();
    previous?.();
  };
}

/**
 * The approval card (an MCP App, ui://colony/approval-card) is the owner's: listed first on the first
 * page for owners, read by owners only — an agent is told it does not exist, as for what it cannot see.
 */
function withApprovalCard<T extends { resources: object[] }>(caller: Caller, cursor: string | undefined, page: T): T {
  return caller.kind === 'owner' && cursor === undefined
    ? { ...page, resources: [approvalCardEntry(), ...page.resources] }
    : page;
}

function readAny(
  ctx: McpContext,
  caller: Caller,
  uri: string,
): (ResourceContents & { _meta?: Record<string, unknown> })[] {
  if (uri !== APPROVAL_CARD_URI) return readResource(ctx, caller, uri);
  if (caller.kind !== 'owner') throw new DomainError('ErrNotFound', `resource ${uri} not found`, { uri });
  return [approvalCardContents()];
}

export const SUBSCRIPTIONS_PER_SESSION = 256;

/** The one spelling of a colony:// URI (the one notifications carry); anything else as given. */
function canonicalUri(uri: string): string {
  try {
    return uriOf(parseResourceUri(uri));
  } catch {
    return uri;
  }
}

function protocolErrors<T>(run: () => T, uri?: string): T {
  try {
    return run();
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    // A URI Colony cannot parse names no resource it has: "not found", with the uri (SEP-2164), like an unknown id.
    if ((e.code === 'ErrNotFound' || e.code === 'ErrInvalidInput') && uri !== undefined)
      throw new ResourceNotFoundError(uri, e.message);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${e.code}: ${e.message}`);
  }
}
