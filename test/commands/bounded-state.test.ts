import assert from 'node:assert/strict';
import { serialize } from 'node:v8';
import { after, describe, it } from 'node:test';
import { markRead, sendToChannel, toggleReaction } from '../../src/actions/channels.js';
import { createToken, revokeToken } from '../../src/actions/principals.js';
import { openApp, type App } from '../../src/app.js';
import { channelDecider } from '../../src/commands/channels.js';
import { goalDecider } from '../../src/commands/goals.js';
import { principalDecider } from '../../src/commands/principals.js';
import { reputationDecider } from '../../src/commands/reputation.js';
import { foldedEvents, loadState } from '../../src/engine/state.js';
import type { Decider } from '../../src/engine/decider.js';
import { channelStream } from '../../src/events/channels.js';
import { goalStream } from '../../src/events/goals.js';
import { agentStream } from '../../src/events/principals.js';
import { getChannelByName } from '../../src/projections/channel-queries.js';
import { createTeam, progress, seedGoal, type Team } from '../../bench/goal-data.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The rule of docs/architecture.md's "Aggregates stay small": a command costs the same however long its stream has
 * grown. Two cheap observations hold it: the state a decider keeps (its serialized size) does not grow
 * with the stream's history, and a command on a warm stream folds a constant number of events.
 */
const { dir, cleanup } = tempDir();
const app: App = openApp({ dataDir: dir, durability: 'normal' });
after(() => {
  app.engine.close();
  cleanup();
});
const team: Team = createTeam(app, 3, ['whoami', 'send_message', 'claim_task', 'complete_task']);
const [agent] = team.agents;
const sizeOf = (decider: Decider<unknown, never, never>, stream: string): number =>
  serialize(loadState(app.engine.db, decider, stream).state).length;
// A few bytes of slack: a larger number serializes longer. Growth with history would be kilobytes.
const same = (big: number, small: number, what: string) =>
  assert.ok(Math.abs(big - small) <= 8, `${what}: ${small} → ${big} bytes`);
const as = (name: string) => ({ actor: `agent:${name}` });

describe('aggregates stay small', () => {
  it('a channel: state and folded events do not grow with its messages and reactions', () => {
    const post = (i: number) =>
      sendToChannel(
        app,
        agent!.speaker,
        { name: 'requests' },
        { body: `note ${i}`, subject: null, priority: 5, metadata: null, replyTo: null },
        as('worker-1'),
      );
    const first = post(0);
    const stream = channelStream(getChannelByName(app.engine.db, team.owner.tenant, 'requests')!.channelId);
    markRead(app, agent!.speaker, new Map([[first.channelId, first.messageId]]), as('worker-1'));
    const small = sizeOf(channelDecider as never, stream);
    const perPost: number[] = [];
    for (let i = 1; i <= 400; i++) {
      const before = foldedEvents();
      const sent = post(i);
      perPost.push(foldedEvents() - before);
      if (i % 10 === 0) {
        toggleReaction(app, agent!.speaker, sent.messageId, 'done', null, as('worker-1'));
        // A reply to a message far back in the channel: found through the projection, not the state.
        sendToChannel(
          app,
          agent!.speaker,
          { name: 'requests' },
          { body: `re ${i}`, subject: null, priority: 5, metadata: null, replyTo: first.messageId },
          as('worker-1'),
        );
      }
    }
    markRead(app, agent!.speaker, new Map([[first.channelId, first.messageId + 500]]), as('worker-1'));
    same(sizeOf(channelDecider as never, stream), small, 'the channel state after 400 more messages');
    assert.ok(
      perPost.slice(10).every((n) => n <= 2),
      `a post on a warm channel folds at most the events since the last command: ${[...new Set(perPost)]}`,
    );
  });

  it('a principal: state does not grow with the tokens it was issued and revoked', () => {
    const id = agent!.agentId;
    const small = sizeOf(principalDecider as never, agentStream(id));
    const owner = { actor: 'user:owner' };
    for (let i = 0; i < 30; i++) createToken(app, 'agent', id, `ci ${i}`, [], owner);
    const tokenId = Number(app.engine.db.prepare('SELECT MAX(token_id) AS id FROM tokens').pluck().get());
    assert.equal(revokeToken(app, 'agent', id, tokenId, 'rotated', owner), true);
    assert.equal(revokeToken(app, 'agent', id, tokenId, 'rotated', owner), false, 'a revoked token is revoked once');
    assert.throws(
      () => revokeToken(app, 'user', team.owner.tenant, tokenId, 'not theirs', owner),
      /token \d+ not found/,
      "another principal's token is not found",
    );
    same(sizeOf(principalDecider as never, agentStream(id)), small, 'the agent after 30 tokens');
  });

  it('a goal and its agents: state does not grow with the tasks done in it', () => {
    const goal = seedGoal(app, team.owner, 1, { roots: 2, children: 5, leaves: 20 });
    progress(app, team, goal.leaves, 10, 0);
    const goalSmall = sizeOf(goalDecider as never, goalStream(goal.goalId));
    const agentSmall = sizeOf(reputationDecider as never, agentStream(agent!.agentId));
    progress(app, team, goal.leaves.slice(10), 150, 0);
    same(sizeOf(goalDecider as never, goalStream(goal.goalId)), goalSmall, 'the goal after 150 more tasks');
    same(
      sizeOf(reputationDecider as never, agentStream(agent!.agentId)),
      agentSmall,
      'the agent after the evidence of 150 more tasks',
    );
  });
});
