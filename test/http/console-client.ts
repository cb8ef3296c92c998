import assert from 'node:assert/strict';
import type { HttpFixture } from '../helpers/mcp-http.js';
import { type Speaker } from '../../src/events/principals.js';

/**
 * A browser-like client for `/api` over real sockets: it keeps the session cookie the server sets (as a
 * browser would, never exposing it to page script) and the CSRF token from the sign-in body (as the
 * console keeps it, in memory), and sends the page's Origin on every state-changing request.
 */
export type Body = Record<string, any>;

export interface SendInit {
  method?: string;
  body?: unknown;
  /** The X-CSRF-Token to send: default the session's; null sends none. */
  csrf?: string | null;
  /** The Origin header on a state-changing request: default the server's own; null sends none. */
  origin?: string | null;
  bearer?: string;
  /** Send no cookie even when signed in. */
  anonymous?: boolean;
}

export class Browser {
  cookie: string | null = null;
  csrf: string | null = null;
  setCookies: string[] = [];

  constructor(readonly f: HttpFixture) {}

  async signIn(token: string, origin?: string | null): Promise<Response> {
    const res = await this.send('/session', { method: 'POST', body: { token }, origin, csrf: null });
    if (res.ok) this.csrf = ((await res.clone().json()) as Body).csrf;
    return res;
  }

  async send(path: string, init: SendInit = {}): Promise<Response> {
    const method = init.method ?? 'GET';
    const headers: Record<string, string> = {};
    if (this.cookie && !init.anonymous) headers.cookie = `colony_session=${this.cookie}`;
    if (method !== 'GET') {
      const origin = init.origin === undefined ? this.f.base : init.origin;
      if (origin !== null) headers.origin = origin;
      const csrf = init.csrf === undefined ? this.csrf : init.csrf;
      if (csrf) headers['x-csrf-token'] = csrf;
    }
    if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.f.base}/api${path}`, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    this.setCookies = res.headers.getSetCookie();
    for (const c of this.setCookies) {
      const m = /^colony_session=([^;]*);.*Max-Age=(\d+)/.exec(c);
      if (m) this.cookie = m[2] === '0' ? null : m[1]!;
    }
    return res;
  }

  /** A request expected to answer `status` (200 by default) with JSON. */
  async json(path: string, init: SendInit = {}, status = 200): Promise<Body> {
    const res = await this.send(path, init);
    const text = await res.text();
    assert.equal(res.status, status, `${init.method ?? 'GET'} ${path}: ${text}`);
    return JSON.parse(text) as Body;
  }

  /** A request expected to fail with `status` and `{error: {code}}`, appending nothing to the log. */
  async error(path: string, init: SendInit, status: number, code: string): Promise<Body> {
    const before = this.f.eventCount();
    const body = await this.json(path, init, status);
    assert.equal(body.error?.code, code, `${init.method ?? 'GET'} ${path}: ${JSON.stringify(body)}`);
    assert.ok(typeof body.error.message === 'string' && body.error.message.length > 0);
    assert.equal(this.f.eventCount(), before, `${init.method ?? 'GET'} ${path}: nothing appended`);
    return body;
  }
}

export const OWNER = { actor: 'user:owner' };
export const ownerSpeaker = (userId = 1, name = 'owner'): Speaker => ({ key: `user-${userId}`, name, tenant: userId });
export const agentSpeaker = (agentId: number, name: string, tenant = 1): Speaker => ({
  key: `agent-${agentId}`,
  name,
  tenant,
});
export const leaf = (title: string, extra: Body = {}): Body => ({
  title,
  description: `${title}: the work to do here.`,
  ...extra,
});
