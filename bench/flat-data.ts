import { createPublicChannel } from '../src/actions/channels.js';
import { createGoal } from '../src/actions/goals.js';
import { proposeTaskTree } from '../src/actions/proposals.js';
import type { App } from '../src/app.js';
import { channelDecider } from '../src/commands/channels.js';
import type { UnitOfWork } from '../src/engine/handle.js';
import { loadState } from '../src/engine/state.js';
import type { Engine } from '../src/engine/engine.js';
import { channelStream, type MessagePosted } from '../src/events/channels.js';
import type { Event } from '../src/engine/event.js';
import { appendToStream, streamVersion } from '../src/engine/store.js';
import { progress, seedGoal, taskTree, type Team } from './goal-data.js';
import { PAYLOAD_TEXT } from './util.js';
import { type Speaker } from '../src/events/principals.js';

/**
 * Data for the `flat` benchmarks (bench/flat-cost.ts), built in time linear in its size.
 *
 * Channel history does not go through the channel decider, whose state used to hold (and each post copy)
 * every message of the channel: n posts cost O(n²). MessagePosted events are appended the way engine.handle
 * appends a decision — appendToStream inside engine.transact, projections applied in the same
 * transaction, the events pushed on uow.appended (so transact marks the projections and the log anchor)
 * — with message ids from uow.ids.next('message') as the decider takes them. The stream, the projections
 * (messages, their FTS index, streams) and the id sequence are what real posts leave; only the events'
 * meta differs: one command (actor = the batch's author) per batch instead of one per message.
 *
 * Batches are 100 messages, not thousands: FTS5 flushes once per transaction, and 5,000-message flushes
 * leave an index whose later merges cost every following message insert (send_message and every task
 * notice) ~0.15 ms more at 400,000 messages — an artifact real posts (one flush each) do not have.
 */
const BATCH = 100;

/** Appends `count` messages to an existing channel, authors taking turns batch by batch. */
export function seedMessages(app: App, channelId: number, authors: readonly Speaker[], count: number): void {
  const { engine } = app;
  const stream = channelStream(channelId);
  for (let done = 0, batch = 0; done < count; batch++) {
    const by = authors[batch % authors.length]!;
    const actor = `${by.key.startsWith('user-') ? 'user' : 'agent'}:${by.name}`;
    engine.transact({ actor }, (uow) => {
      const version = streamVersion(engine.db, stream);
      if (version === 0) throw new Error(`channel ${channelId} does not exist`);
      const n = Math.min(BATCH, count - done);
      const events = Array.from({ length: n }, (_, i): MessagePosted => ({
        type: 'MessagePosted',
        data: {
          messageId: uow.ids.next('message'),
          channelId,
          kind: 'message',
          from: by.key,
          fromName: by.name,
          body: `${PAYLOAD_TEXT} (${done + i + 1})`,
          subject: null,
          priority: 5,
          metadata: null,
          replyTo: null,
        },
      }));
      append(engine, uow, stream, version, events);
      done += n;
    });
  }
  // Real posts leave the decider's state folded; a decider that keeps snapshots has one within its interval of
  // the head. One load inside a command does both (once, O(n)), as the first real post after seeding would.
  engine.transact({ actor: 'bench' }, () => loadState(engine.db, channelDecider, stream));
}

/** The engine's own append path, as handle() runs it after a decision. */
function append(engine: Engine, uow: UnitOfWork, stream: string, version: number, events: Event[]): void {
  const stored = appendToStream(
    engine.db,
    stream,
    version === 0 ? 'no_stream' : version,
    events,
    uow.meta,
    uow.now,
    version,
  );
  engine.projections.apply(engine.db, stored);
  uow.appended.push(...stored);
}

/**
 * Filler as in bench/evidence-data.ts: ~250-byte comments on `flat-card-N` streams of ten events, a type
 * only the streams catalog projects — the bulk of a big log's rows without paying for product commands.
 */
export function seedFiller(engine: Engine, count: number, firstCard: number): void {
  for (let done = 0; done < count;) {
    engine.transact({ actor: 'bench' }, (uow) => {
      for (const end = Math.min(count, done + 20_000); done < end;) {
        const cardId = firstCard + Math.floor(done / 10);
        const n = Math.min(10 - (done % 10), end - done);
        const events = Array.from({ length: n }, () => ({
          type: 'CardCommented',
          data: { cardId, text: PAYLOAD_TEXT },
        }));
        append(engine, uow, `flat-card-${cardId}`, done % 10, events);
        done += n;
      }
    });
  }
}

/**
 * A busy store's log of about `total` events for `team`'s tenant: real goals of 1,000 tasks (one per
 * 100,000 events, through propose_task_tree) whose 900 leaves the team's agents all worked (claim, usage,
 * complete: their verdicts are the agents' reputation history), 40 % channel history in 100 channels,
 * the rest filler. The command path's tables (es_events, streams, tasks, evidence, messages and their FTS
 * index) are all big.
 */
export function seedBigLog(app: App, team: Team, total: number): void {
  for (let g = 0; g < Math.max(1, Math.round(total / 100_000)); g++) {
    const { leaves } = seedGoal(app, team.owner, 900 + g);
    progress(app, team, leaves, leaves.length, 0);
  }
  const authors = [team.owner, ...team.agents.map((a) => a.speaker)];
  const perChannel = Math.floor((0.4 * total) / 100);
  for (let c = 0; c < 100; c++) {
    const channelId = createPublicChannel(app, team.owner.tenant, `history-${c}`, 'Old conversations.', {
      actor: 'user:owner',
    });
    seedMessages(app, channelId, authors, perChannel);
  }
  seedFiller(app.engine, Math.max(0, total - app.engine.head().position), 1);
}

export const SMALL_GOAL_LEAVES = 16;

/**
 * `count` goals of one root, one part and 16 leaves (18 tasks), numbered from `first`; their leaves in
 * order. The root index (hence billing code, the reputation domain) rotates so the verdicts spread over
 * the same three domains as the big goals' trees.
 */
export function smallGoals(app: App, owner: Speaker, count: number, first: number): number[] {
  const leaves: number[] = [];
  for (let n = first; n < first + count; n++) {
    app.engine.transact({ actor: 'user:owner' }, () => {
      const { goalId } = createGoal(
        app,
        owner,
        {
          title: `Small goal ${n}`,
          description: `A small goal of ${SMALL_GOAL_LEAVES} steps.`,
          budgets: { tokens: null, cents: null },
          requireEvidence: false,
          maxSpawnDepth: 3,
          coordinatorConfig: 'default',
          approvalMode: 'auto',
        },
        { actor: 'user:owner' },
      );
      const p = proposeTaskTree(app, owner, goalId, 'A small plan.', taskTree(n % 3, 1, SMALL_GOAL_LEAVES), {
        actor: 'user:owner',
      });
      if (!p.approved) throw new Error(`proposal ${p.proposalId} was not auto-approved`);
      leaves.push(...p.taskIds.slice(2, 2 + SMALL_GOAL_LEAVES)); // depth-first: root, part, then its leaves
    });
  }
  return leaves;
}
