import type { Event } from '../engine/event.js';

/**
 * Web apps (xylocopa's webapp_present): deliverables an agent shows its owner.
 * Each registration is its own `webapp-<n>` stream (n from the `webapp` id sequence); users and URLs see
 * the random `appId` (32 hex, 128 bits): `/apps/<appId>/` is a capability URL, so the id must be
 * unguessable, unlike the sequential n.
 *
 * Kinds: `static` — an .html file inside the project (target: its path relative to the project),
 * `port` — a loopback service (target: the port as a digit string), `url` — an external http(s) link.
 * The registry key is (owner, project, kind, target): presenting the same thing again re-presents the
 * registration (xylocopa's upsert). A `port` registration ends when the agent that last presented it is
 * stopped (xylocopa's reaper kills that agent's listeners; Colony stops proxying to the port).
 */
export type WebappKind = 'static' | 'port' | 'url';
export const WEBAPP_KINDS: readonly WebappKind[] = ['static', 'port', 'url'];

export type WebappPresented = Event<
  'WebappPresented',
  {
    appId: string;
    n: number;
    ownerId: number;
    projectId: number;
    kind: WebappKind;
    target: string;
    title: string;
    description: string;
    /** The presenting agent: it posted the card, and owns the port until it stops. */
    agentId: number;
    /** The card message. */
    messageId: number;
  }
>;

/**
 * The same (project, kind, target) presented again: a non-empty title or description replaces the
 * stored one ('' keeps it), the presenter becomes `agentId`, and a retired registration is live again.
 */
export type WebappRepresented = Event<
  'WebappRepresented',
  { appId: string; title: string; description: string; agentId: number; messageId: number }
>;

export type WebappRetireReason = 'agent_stopped';
export type WebappRetired = Event<'WebappRetired', { appId: string; reason: WebappRetireReason }>;

export type WebappEvent = WebappPresented | WebappRepresented | WebappRetired;

export const webappStream = (n: number): string => `webapp-${n}`;

export const WEBAPP_ID = /^[0-9a-f]{32}$/;
export const MIN_APP_PORT = 1024;
export const MAX_APP_PORT = 65535;
/** Where a static or port app is served; url apps are links and never served. */
export const appPath = (appId: string): string => `/apps/${appId}/`;
