import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { StoredEvent } from '../../src/engine/event.js';
import { LogFollower } from '../../src/runtime/log-follower.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { openCard, runCard, testEngine } from '../helpers/engine.js';

/**
 * The reactor's place in the log (src/runtime/log-follower.ts): every committed event exactly once, in
 * order, whether it came from this process's bus or only from the log (another connection's commit).
 */
describe('LogFollower', () => {
  it('hands out bus events and events only the log has, each once, in log order', (t) => {
    const scratch = tempDir('colony-follower-');
    t.after(scratch.cleanup);
    const file = join(scratch.dir, 'log.db');
    const here = testEngine({ file });
    t.after(() => here.close());
    const follower = new LogFollower(here);
    const seen: StoredEvent[] = [];
    const sub = here.bus.events$.subscribe((e) => follower.publish(e));
    t.after(() => sub.unsubscribe());
    const react = (e: StoredEvent) => seen.push(e);

    const card = openCard(here, 'first');
    runCard(here, card, { type: 'CommentCard', text: 'one' });
    follower.follow(react);
    assert.deepEqual(
      seen.map((e) => e.position),
      [1, 2],
    );

    // Another connection (another process) commits: its events never reach this bus.
    const there = testEngine({ file });
    runCard(there, card, { type: 'CommentCard', text: 'from elsewhere' });
    there.close();
    runCard(here, card, { type: 'CommentCard', text: 'two' }); // on the bus, after a gap
    follower.follow(react);
    assert.deepEqual(
      seen.map((e) => e.position),
      [1, 2, 3, 4],
    );
    assert.equal((seen[2]!.data as { text: string }).text, 'from elsewhere');
    assert.ok(follower.caughtUp);

    // A reaction that commits: its event follows the ones in hand, once.
    runCard(here, card, { type: 'CommentCard', text: 'three' });
    runCard(here, card, { type: 'CommentCard', text: 'four' });
    let reacted = false;
    follower.follow((e) => {
      react(e);
      if (!reacted) {
        reacted = true;
        runCard(here, card, { type: 'CommentCard', text: 'in reaction' });
      }
    });
    follower.follow(react);
    assert.deepEqual(
      seen.map((e) => e.position),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal((seen[6]!.data as { text: string }).text, 'in reaction');
  });
});
