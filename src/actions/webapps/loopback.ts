import type { App } from '../../app.js';
import type { NetworkMode, SandboxOverrides } from '../../events/sandbox.js';
import { getMessage } from '../../projections/channel-queries.js';
import { runtimeOf } from '../../projections/run-queries.js';
import type { WebappRow } from '../../projections/webapps.js';

/**
 * Whose port a `port` web app reaches. `/apps/<id>/` proxies to 127.0.0.1:<port> of the host Colony runs
 * on. An agent confined in a network namespace of its own (network `none` or `allow`) listens on the
 * sandbox's loopback, never the host's: a port it presents could only name some other service of the host
 * (PostgreSQL, Redis, an admin page), which the proxy would then hand to whoever holds the URL — the agent
 * included. So an agent presents a port only while its processes share the host's loopback (network
 * `host`, or its sandbox off); the owner may present any port, for any of its agents.
 */

/**
 * The agent's network as it runs now: its own settings over the process-wide defaults — $COLONY_SANDBOX
 * and $COLONY_NETWORK, read as runtime/confine.ts's effectiveSandbox reads them (a test holds the two
 * together; this layer may not import the runtime). A `serve --sandbox off` given on the command line
 * alone is not seen here, so such an agent counts as confined: the safe side.
 */
export function sharesHostLoopback(o: SandboxOverrides | null, env: NodeJS.ProcessEnv = process.env): boolean {
  const sandbox = o?.sandbox ?? (env.COLONY_SANDBOX === 'off' ? 'off' : 'on');
  const fallback = env.COLONY_NETWORK;
  const network: NetworkMode =
    o?.network ?? (fallback === 'none' || fallback === 'host' || fallback === 'allow' ? fallback : 'allow');
  return sandbox === 'off' || network === 'host';
}

export const agentSharesHostLoopback = (app: App, agentId: number): boolean =>
  sharesHostLoopback(runtimeOf(app.engine.db, agentId).sandbox);

/**
 * Checked again on every request to a port app (http/apps.ts): the agent's settings may have changed since
 * it presented the port. Served when its last presentation was the owner's (the card says so: Colony
 * writes it, and the registration names the card of its last presentation) or its presenting agent still
 * shares the host's loopback.
 */
export function portServable(app: App, w: WebappRow): boolean {
  const card = getMessage(app.engine.db, w.messageId)?.metadata?.webapp as { presented_by?: unknown } | undefined;
  return card?.presented_by === 'owner' || agentSharesHostLoopback(app, w.agentId);
}
