import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { markRead, sendDirect, sendToChannel, toggleReaction, type Message } from '../../src/actions/channels.js';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { productProjections, type App } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { Engine } from '../../src/engine/engine.js';
import {
  channelMessages,
  inbox,
  mentionsOf,
  searchMessages,
  systemNotifications,
  visibleChannels,
} from '../../src/projections/channel-queries.js';
import { channelsProjection, mentionsIn } from '../../src/projections/channels.js';
import { dumpTables } from '../helpers/engine.js';
import { postSystemMessage } from '../../src/actions/notifications.js';
import { speakerOf } from '../../src/actions/principals.js';

/**
 * The channels projection on `:memory:`, read through the production queries: the rows a scenario
 * leaves behind equal the rows a rebuild from the log gives (FTS index included), and search works
 * on the rebuilt index.
 */
let app: App;
const by = { actor: 'tester' };
const msg = (body: string, extra: Partial<Message> = {}): Message => ({
  body,
  subject: null,
  priority: 5,
  metadata: null,
  replyTo: null,
  ...extra,
});

beforeEach(() => {
  const engine = Engine.open({
    file: ':memory:',
    clock: fixedClock('2026-01-01T00:00:00.000Z', 1000),
    projections: productProjections,
  });
  app = { engine, dataDir: '', key: new Uint8Array(32) };
});
afterEach(() => app.engine.close());

function agent(ownerId: number, name: string): string {
  const { agentId } = registerAgent(
    app,
    {
      name,
      ownerId,
      model: 'm',
      systemPrompt: 'p',
      toolScope: ['whoami'],
      tier: 'supervised',
      command: null,
      parentId: null,
      spawnDepth: 0,
    },
    by,
  );
  return `agent-${agentId}`;
}

/** Two tenants; DMs, channel posts with mentions, reactions added and removed, read markers, a system message. */
function scenario() {
  const { userId } = createOwner(app, 'alice', by);
  const { userId: otherId } = createOwner(app, 'bob', by);
  const [w, h] = [speakerOf(app, agent(userId, 'worker')), speakerOf(app, agent(userId, 'helper'))];
  const outsider = speakerOf(app, agent(otherId, 'outsider'));
  const owner = speakerOf(app, `user-${userId}`);
  const dm = sendDirect(
    app,
    w,
    'helper',
    msg('Please review the parser change', { subject: 'review', priority: 8 }),
    by,
  );
  sendDirect(app, h, 'worker', msg('Looking now', { replyTo: dm.messageId }), by);
  const req = sendToChannel(
    app,
    owner,
    { name: '#requests' },
    msg('Need a token for @worker and @helper, @worker again'),
    by,
  );
  sendToChannel(app, outsider, { name: 'requests' }, msg('other tenant request about the parser'), by);
  toggleReaction(app, w, req.messageId, 'in_progress', null, by);
  toggleReaction(app, h, req.messageId, 'done', { note: 'x' }, by);
  toggleReaction(app, h, req.messageId, 'done', null, by);
  postSystemMessage(app, userId, 'approvals', 'Task 1 "Parse" approved → claimed by worker', { task_id: 1 }, by);
  markRead(app, h, new Map([[dm.channelId, dm.messageId]]), by);
  return { w, h, owner, outsider, dm, req };
}

const TABLES = channelsProjection.tables.filter((t) => t !== 'message_fts');
const snapshot = (): Record<string, unknown[]> => ({
  ...dumpTables(app.engine.db, TABLES),
  fts: app.engine.db.prepare('SELECT rowid, body, subject FROM message_fts ORDER BY rowid').all(),
});

describe('channels projection', () => {
  it('gives the same rows, FTS index included, incrementally and after a rebuild', () => {
    scenario();
    const live = snapshot();
    assert.equal(live.messages!.length, 5);
    assert.equal(live.reactions!.length, 1, 'the toggled-off reaction is gone');
    assert.equal(live.channels!.length, 4, 'a dm, two #requests (one per tenant), #approvals');
    app.engine.rebuild();
    assert.deepEqual(snapshot(), live);
    app.engine.rebuild(['channels']);
    assert.deepEqual(snapshot(), live);
    const leftovers = app.engine.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND instr(name, '__rebuild_') > 0`)
      .all();
    assert.deepEqual(leftovers, []);
  });

  it('searches the rebuilt FTS index within what the viewer may see', () => {
    const { w, outsider, h } = scenario();
    app.engine.rebuild(['channels']);
    const filter = { minPriority: 1, fromName: null, channelId: null, limit: 10 };
    assert.deepEqual(
      searchMessages(app.engine.db, w, 'parser', filter).map((m) => m.body),
      ['Please review the parser change'],
    );
    assert.deepEqual(
      searchMessages(app.engine.db, outsider, 'parser', filter).map((m) => m.body),
      ['other tenant request about the parser'],
    );
    assert.deepEqual(searchMessages(app.engine.db, h, 'review', { ...filter, minPriority: 9 }), []);
  });

  it('parses mentions, tracks read markers and unread system messages', () => {
    const { w, h, owner, dm } = scenario();
    const db = app.engine.db;
    assert.deepEqual(mentionsIn('hi @worker, @worker and mail@example.com @Up @ab'), ['worker']);
    assert.deepEqual(
      mentionsOf(db, w, 10).map((m) => m.channelName),
      ['requests'],
    );
    assert.deepEqual(inbox(db, h, { includeRead: false, minPriority: 1, fromName: null, limit: 10 }).total, 0);
    assert.deepEqual(
      inbox(db, w, { includeRead: false, minPriority: 1, fromName: 'helper', limit: 10 }).messages.map(
        (m) => m.replyTo,
      ),
      [dm.messageId],
    );
    const sys = systemNotifications(db, owner, 5);
    assert.equal(sys.total, 1);
    assert.deepEqual(sys.messages[0]!.metadata, { kind: 'system', task_id: 1 });
    assert.equal(sys.messages[0]!.fromName, 'system');
    const channels = visibleChannels(db, w).map((c) => [c.name, c.kind, c.unreadCount]);
    assert.deepEqual(channels, [
      ['requests', 'public', 1],
      ['approvals', 'public', 1],
      [`dm:${[w.key, h.key].sort().join(':')}`, 'dm', 1],
    ]);
    assert.deepEqual(
      channelMessages(db, dm.channelId, 1, null).map((m) => m.body),
      ['Looking now'],
    );
  });
});
