import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner, createToken, revokeToken } from '../../src/actions/principals.js';
import { SessionStore } from '../../src/http/session.js';
import { findActiveToken } from '../../src/projections/principal-queries.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { tokenHash } from '../../src/tokens.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { Browser, OWNER, ownerSpeaker, type Body } from './console-client.js';
import { createPublicChannel } from '../../src/actions/channels.js';

/**
 * Console sessions over real sockets: signing in with an owner's or an agent's token, the cookie's
 * flags, CSRF and Origin checks on state-changing requests, revocation taking effect at once, sign-out,
 * an agent's read-only session, bearer tokens unchanged, and failed sign-ins that never lock the right token out
 * (session-backoff.test.ts has the backoff itself).
 */
let f: HttpFixture;
const COOKIE = /^colony_session=([0-9a-f]{64}); HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/;
const newGoal = (title: string) =>
  createGoal(
    f.app,
    ownerSpeaker(),
    {
      title,
      description: 'A goal for the session tests.',
      budgets: { tokens: null, cents: null },
      maxSpawnDepth: 3,
      coordinatorConfig: 'default',
      approvalMode: 'human',
    },
    OWNER,
  ).goalId;

before(async () => {
  f = await httpFixture();
});
after(() => f.close());

describe('POST /api/session', () => {
  it('signs an owner in: a random HttpOnly, SameSite=Strict cookie and a CSRF token; the token is never echoed', async () => {
    const b = new Browser(f);
    const res = await b.signIn(f.ownerToken);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(!text.includes(f.ownerToken), 'the token is not in the body');
    const body = JSON.parse(text) as Body;
    assert.deepEqual(body.principal, { kind: 'owner', id: 1, name: 'owner', tenant: 1 });
    assert.match(body.csrf, /^[0-9a-f]{64}$/);
    assert.equal(
      body.position,
      f.app.engine.head().position,
      'where the live feed starts (the console opens it after this)',
    );
    assert.equal(b.setCookies.length, 1);
    const [, id] = COOKIE.exec(b.setCookies[0]!) ?? [];
    assert.ok(id, b.setCookies[0]);
    assert.ok(!b.setCookies[0]!.includes(f.ownerToken) && id !== body.csrf);
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('signs an agent in', async () => {
    const b = new Browser(f);
    const body = (await (await b.signIn(f.agentToken)).json()) as Body;
    assert.deepEqual(body.principal, { kind: 'agent', id: f.agentId, name: 'worker', tenant: 1 });
    assert.ok(b.cookie);
  });

  it('refuses a bad token (401, no cookie), bad input (400) and another origin (403 ErrCsrf)', async () => {
    const b = new Browser(f);
    const bad = await b.signIn('colony_not-a-token');
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as Body).error.code, 'ErrUnauthorized');
    assert.deepEqual(b.setCookies, []);
    await b.error(
      '/session',
      { method: 'POST', body: { token: f.ownerToken, remember: true } },
      400,
      'ErrInvalidInput',
    );
    await b.error(
      '/session',
      { method: 'POST', body: { token: f.ownerToken }, origin: 'http://evil.example' },
      403,
      'ErrCsrf',
    );
    assert.deepEqual(b.setCookies, []);
    assert.equal(b.cookie, null);
  });
});

describe('a session', () => {
  it('GET /api/session answers who is signed in, the CSRF token and the log position now; without a cookie 401', async () => {
    const b = new Browser(f);
    const csrf = ((await (await b.signIn(f.ownerToken)).json()) as Body).csrf;
    createPublicChannel(f.app, 1, 'after-sign-in', 'written after the sign-in', OWNER);
    const me = await b.json('/session');
    assert.deepEqual(me, {
      principal: { kind: 'owner', id: 1, name: 'owner', tenant: 1 },
      csrf,
      position: f.app.engine.head().position,
    });
    await b.error('/session', { anonymous: true }, 401, 'ErrUnauthorized');
    await b.error('/goals', { anonymous: true }, 401, 'ErrUnauthorized');
  });

  it('reads with the cookie alone; a state-changing request needs the X-CSRF-Token and the own Origin — else 403 ErrCsrf, nothing written', async () => {
    const b = new Browser(f);
    await b.signIn(f.ownerToken);
    const goalId = newGoal('CSRF target');
    assert.equal(((await b.json('/goals')) as Body).total, 1);
    const close = { method: 'POST', body: { status: 'cancelled', summary: 'not needed' } };
    await b.error(`/goals/${goalId}/complete`, { ...close, csrf: null }, 403, 'ErrCsrf');
    await b.error(`/goals/${goalId}/complete`, { ...close, csrf: 'f'.repeat(64) }, 403, 'ErrCsrf');
    await b.error(`/goals/${goalId}/complete`, { ...close, csrf: 'short' }, 403, 'ErrCsrf');
    await b.error(`/goals/${goalId}/complete`, { ...close, origin: 'http://localhost:9999' }, 403, 'ErrCsrf');
    await b.error(`/goals/${goalId}/complete`, { ...close, origin: 'null' }, 403, 'ErrCsrf');
    await b.error('/session', { method: 'DELETE', csrf: null }, 403, 'ErrCsrf');
    assert.equal(getGoal(f.app.engine.db, goalId)!.status, 'draft');
    const done = await b.json(`/goals/${goalId}/complete`, { ...close, origin: null });
    assert.equal(done.status, 'cancelled', 'no Origin header (a same-origin GET-less client) is fine with the token');
  });

  it('stops working on the next request once its token is revoked', async () => {
    const token = createToken(f.app, 'user', 1, 'console', ['mcp', 'api'], OWNER);
    const b = new Browser(f);
    await b.signIn(token);
    await b.json('/goals');
    revokeToken(f.app, 'user', 1, findActiveToken(f.app.engine.db, tokenHash(token))!.tokenId, 'lost laptop', OWNER);
    await b.error('/goals', {}, 401, 'ErrUnauthorized');
    assert.equal(b.cookie, null, 'the dead cookie is cleared');
    await b.error('/session', {}, 401, 'ErrUnauthorized');
  });

  it('signs out: 204, the cookie cleared, the session gone (401 even with the old cookie)', async () => {
    const b = new Browser(f);
    await b.signIn(f.ownerToken);
    const cookie = b.cookie;
    const res = await b.send('/session', { method: 'DELETE' });
    assert.equal(res.status, 204);
    assert.match(b.setCookies[0] ?? '', /^colony_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0$/);
    assert.equal(b.cookie, null);
    b.cookie = cookie;
    await b.error('/session', {}, 401, 'ErrUnauthorized');
    await b.error('/goals', {}, 401, 'ErrUnauthorized');
  });

  it("an agent's session reads its team's console but every action is 403 ErrForbidden, nothing written", async () => {
    const b = new Browser(f);
    await b.signIn(f.agentToken);
    const goalId = newGoal('An agent may look');
    assert.ok(((await b.json('/goals')) as Body).goals.some((g: Body) => g.id === goalId));
    await b.json(`/goals/${goalId}`);
    await b.json('/agents');
    await b.json('/proposals');
    await b.json('/requests');
    await b.json('/integrity');
    const actions: [string, unknown][] = [
      [`/goals/${goalId}/resume`, {}],
      [`/goals/${goalId}/complete`, { status: 'stuck', summary: 'x' }],
      ['/tasks/1/cancel', { reason: 'nope' }],
      ['/proposals/1/approve', {}],
      ['/proposals/1/reject', { reason: 'no' }],
      ['/agents/worker/unquarantine', {}],
      ['/agents/worker/stop', {}],
      ['/agents/worker/start', {}],
      ['/agents/worker/wake', {}],
      ['/requests/1/fulfil', { value: 'v' }],
      ['/requests/1/reject', { reason: 'no' }],
      ['/verify', {}],
      [`/goals/${goalId}/complete`, { bad: 'input' }],
    ];
    for (const [path, body] of actions) await b.error(path, { method: 'POST', body }, 403, 'ErrForbidden');
    await b.error('/audit', {}, 403, 'ErrForbidden');
    await b.error('/secrets/agent/worker', {}, 403, 'ErrForbidden');
  });
});

describe('bearer tokens', () => {
  it('keep working for programs as before: owner 200, none 401 with WWW-Authenticate, an agent token 403 insufficient_scope', async () => {
    const b = new Browser(f);
    const ok = await b.send('/goals', { bearer: f.ownerToken });
    assert.equal(ok.status, 200);
    const none = await b.send('/goals');
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
    assert.equal(((await none.json()) as Body).error.code, 'ErrUnauthorized');
    assert.equal((await b.send('/goals', { bearer: 'colony_nope' })).status, 401);
    const agent = await b.send('/goals', { bearer: f.agentToken });
    assert.equal(agent.status, 403);
    assert.match(agent.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    const goalId = newGoal('Bearer needs no CSRF token');
    const closed = await b.json(`/goals/${goalId}/complete`, {
      method: 'POST',
      bearer: f.ownerToken,
      body: { status: 'stuck', summary: 'blocked' },
      csrf: null,
      origin: null,
    });
    assert.equal(closed.status, 'stuck');
  });

  it('a second owner sees only their own goals (tenant isolation: 404)', async () => {
    const other = createOwner(f.app, 'other-owner', { actor: 'system' });
    const mine = newGoal('Not theirs');
    const b = new Browser(f);
    await b.signIn(other.token);
    assert.equal(((await b.json('/goals')) as Body).total, 0);
    await b.error(`/goals/${mine}`, {}, 404, 'ErrGoalNotFound');
    await b.error(`/goals/${mine}/history`, {}, 404, 'ErrGoalNotFound');
    await b.error(`/goals/${mine}/replay?position=1`, {}, 404, 'ErrGoalNotFound');
    await b.error(`/goals/${mine}/timeline`, {}, 404, 'ErrGoalNotFound');
    await b.error(
      `/goals/${mine}/complete`,
      { method: 'POST', body: { status: 'stuck', summary: 'x' } },
      404,
      'ErrGoalNotFound',
    );
  });
});

describe('the session store and the sign-in limit', () => {
  it('ends a session idle for 12 h and keeps at most 64 per principal (the least recently used goes)', () => {
    let now = 0;
    const store = new SessionStore(() => now);
    const first = store.create('user:1@1', 'h').id;
    now += 12 * 3600_000 - 1;
    assert.ok(store.find(first), 'used just in time: renewed');
    now += 12 * 3600_000;
    assert.equal(store.find(first), null);
    const ids = Array.from({ length: 65 }, () => store.create('user:1@1', 'h').id);
    assert.equal(store.find(ids[0]!), null);
    assert.ok(store.find(ids[1]!) && store.find(ids[64]!));
    store.create('agent:2@1', 'h');
    assert.equal(store.size, 65);
  });

  it('after many wrong tokens from one address, the right token still signs in at once (no lockout)', async () => {
    const b = new Browser(f);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i += 1) statuses.push((await b.signIn(`colony_guess-${i}`)).status);
    assert.ok(
      statuses.every((s) => s === 401 || s === 429) && statuses.includes(429),
      `wrong tokens slowed: ${statuses.join(' ')}`,
    );
    const res = await b.signIn(f.ownerToken);
    assert.equal(res.status, 200);
    assert.ok(b.cookie, 'signed in');
    assert.equal((await new Browser(f).signIn(f.agentToken)).status, 200, 'and so does an agent from the same address');
  });
});
