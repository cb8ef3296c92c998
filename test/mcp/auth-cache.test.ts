import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createToken, revokeToken } from '../../src/actions/principals.js';
import { openApp } from '../../src/app.js';
import { Authenticator } from '../../src/mcp/auth.js';
import { createTeam } from '../../bench/goal-data.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The authenticated-caller cache under group commit: a revocation made by a call counts for every call
 * handled after it — also those in the same turn of the event loop, before its batch commits (fail closed).
 */
const { dir, cleanup } = tempDir();
const app = openApp({ dataDir: dir, durability: 'normal' });
after(() => {
  app.engine.close();
  cleanup();
});

describe('caller cache', () => {
  it('a token revoked in an open batch is refused before the batch commits', async () => {
    const team = createTeam(app, 1, ['whoami']);
    const agent = team.agents[0]!;
    const owner = { actor: 'user:owner' };
    const token = createToken(app, 'agent', agent.agentId, 'spare', [], owner);
    const auth = new Authenticator(app);
    assert.equal(auth.authenticate(token)?.name, 'worker-1', 'cached');
    const tokenId = Number(app.engine.db.prepare('SELECT MAX(token_id) FROM tokens').pluck().get());
    const revoking = app.engine.group.run(async () =>
      revokeToken(app, 'agent', agent.agentId, tokenId, 'leaked', owner),
    );
    assert.ok(app.engine.db.inTransaction, 'the batch has not committed yet');
    assert.equal(auth.authenticate(token), null, 'the next call is refused already');
    await revoking;
    assert.equal(auth.authenticate(token), null);
    assert.equal(auth.authenticate(agent.token)?.name, 'worker-1', "the agent's other token still works");
  });
});
