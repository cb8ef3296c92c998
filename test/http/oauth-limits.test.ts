import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientInfo } from '../../src/actions/oauth.js';
import { MetadataDocuments } from '../../src/http/oauth-cimd.js';
import { ClientRegistry } from '../../src/http/oauth-clients.js';
import { FailureLimiter } from '../../src/http/oauth-errors.js';
import { AuthCodes, PendingRequests, REQUEST_TTL_MS } from '../../src/http/oauth-requests.js';
import type { HttpFixture } from '../helpers/mcp-http.js';
import { oauthFixture } from '../helpers/oauth.js';

/**
 * What anonymous callers can make Colony hold stays bounded: registrations and pending requests are
 * capped in memory (the oldest go) and expire; registrations per address are rate-limited; codes are
 * single use. Nothing of it reaches the log.
 */
let f: HttpFixture;
before(async () => {
  f = await oauthFixture();
});
after(() => f.close());

const client: ClientInfo = { clientId: 'c', kind: 'dcr', clientName: 'C', redirectUris: ['http://127.0.0.1/cb'] };
const fields = {
  client,
  redirectUri: 'http://127.0.0.1/cb',
  redirectUriGiven: true,
  state: null,
  codeChallenge: 'x',
  resource: 'r',
  scopes: ['mcp' as const],
  afterPosition: 0,
};

describe('memory bounds', () => {
  it('pending requests: capped (the oldest goes), unique user codes, gone after 10 minutes', () => {
    let now = 0;
    const requests = new PendingRequests(() => now, 3);
    const made = Array.from({ length: 4 }, () => requests.create(fields));
    assert.equal(requests.get(made[0]!.id), null, 'the oldest was dropped');
    assert.equal(new Set(made.map((r) => r.userCode)).size, 4);
    assert.equal(requests.byCode(made[3]!.userCode)?.id, made[3]!.id);
    now += REQUEST_TTL_MS;
    assert.equal(requests.get(made[3]!.id), null);
    assert.deepEqual(requests.waiting(), []);
  });

  it('registered clients wait in memory, capped; the oldest unapproved one is forgotten', async () => {
    const registry = new ClientRegistry(f.app, new MetadataDocuments(), 2);
    const [a, b, c] = [
      registry.register('a', ['http://127.0.0.1/a']),
      registry.register('b', ['http://127.0.0.1/b']),
      registry.register('c', ['http://127.0.0.1/c']),
    ];
    await assert.rejects(registry.resolve(a.clientId), /unknown client_id/);
    assert.equal((await registry.resolve(b.clientId)).clientName, 'b');
    assert.equal((await registry.resolve(c.clientId)).clientName, 'c');
  });

  it('a limiter allows its budget per key in a sliding minute, then refuses until the window clears', () => {
    let now = 0;
    const limiter = new FailureLimiter(10, 60_000, () => now);
    for (let i = 0; i < 10; i += 1) {
      assert.equal(limiter.retryAfter('a'), 0);
      limiter.fail('a');
    }
    assert.equal(limiter.retryAfter('a'), 60);
    assert.equal(limiter.retryAfter('b'), 0);
    now += 60_001;
    assert.equal(limiter.retryAfter('a'), 0);
  });

  it('a code is spent by its first use', () => {
    const codes = new AuthCodes(() => 0);
    const code = codes.issue(
      {
        clientId: 'c',
        clientName: 'C',
        redirectUri: 'u',
        codeChallenge: 'x',
        resource: 'r',
        scopes: ['mcp'],
        principal: { kind: 'user', id: 1, ownerId: 1 },
        approvalN: 1,
      },
      client,
      true,
    );
    assert.equal(codes.take(code)?.used, false);
    assert.equal(codes.take(code)?.used, true);
    assert.equal(codes.take('not-a-code'), null);
  });
});

describe('registration over HTTP', () => {
  it('logs nothing, and is limited to 10 a minute per address (429 with Retry-After)', async () => {
    const before = f.eventCount();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 11; i++) {
      const res = await fetch(`${f.base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'] }),
      });
      statuses.push(res.status);
      retryAfter = res.headers.get('retry-after');
      await res.body?.cancel();
    }
    assert.deepEqual(statuses, [...Array(10).fill(201), 429]);
    assert.ok(Number(retryAfter) >= 1);
    assert.equal(f.eventCount(), before);
  });
});
