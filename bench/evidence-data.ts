import { createGoal } from '../src/actions/goals.js';
import { proposeTaskTree } from '../src/actions/proposals.js';
import type { App } from '../src/app.js';
import type { Engine } from '../src/engine/engine.js';
import { appendToStream } from '../src/engine/store.js';
import type { UnitOfWork } from '../src/engine/handle.js';
import { goalStreams } from '../src/evidence/goal-streams.js';
import { createTeam, taskTree, workTask, type Team } from './goal-data.js';
import { PAYLOAD_TEXT } from './util.js';

/**
 * The log behind the export and verify benchmarks: one goal of about `goalEvents` events, made through
 * Colony's own commands (create_goal, propose_task_tree in auto mode; every leaf claimed, charged and
 * completed by one of ten agents), spread evenly through a log of `totalEvents` events. The other events
 * are appended through the engine's own append path (appendToStream inside a command's transaction, the
 * projections applied, the positions marked) — ~250-byte comments on `card-N` streams of ten events each,
 * a type only the `streams` catalog projects — so the log has the size, the stream count and the
 * interleaving of a busy store without paying for 990,000 product commands. Nothing here is measured.
 */
export interface EvidenceLog {
  team: Team;
  goalId: number;
  /** Events of the goal's streams (what its bundle carries). */
  goalEvents: number;
  /** Events in the log. */
  events: number;
  /** Streams in the log. */
  streams: number;
  /** Appends `count` more filler events (new streams of ten), e.g. to give a checkpoint something new to cover. */
  pad(count: number): void;
}

const OWNER = { actor: 'user:owner' } as const;
/** Filler streams hold ten events each. */
const PER_STREAM = 10;

export function buildEvidenceLog(
  app: App,
  totalEvents: number,
  goalEvents: number,
  say: (s: string) => void = () => {},
): EvidenceLog {
  const { engine } = app;
  const team = createTeam(app, 10, ['claim_task', 'complete_task', 'report_usage']);
  const filler = new Filler(engine);
  const density = totalEvents / goalEvents; // log events per goal event
  let mine = 0; // events the goal's commands appended so far
  const padTo = (position: number) => {
    if (position > engine.head().position) filler.append(position - engine.head().position);
  };
  const goalId = engine.transact(OWNER, () => {
    const { goalId } = createGoal(
      app,
      team.owner,
      {
        title: 'Goal 1: ship the audited release',
        description: 'The release an auditor will ask about, from plan to verified delivery.',
        budgets: { tokens: null, cents: null },
        requireEvidence: false,
        maxSpawnDepth: 3,
        coordinatorConfig: 'default',
        approvalMode: 'auto',
      },
      OWNER,
    );
    return goalId;
  }).value!;
  const counted = (): number => countGoalEvents(engine, goalId);
  mine = counted();
  // Roots of 9 × 10 tasks, proposed one at a time as the previous one's leaves run out: a root's proposal
  // is one command (~200 events), each of its 90 leaves' lives (claim, usage, complete) ~4 events.
  let root = 0;
  let leaves: number[] = [];
  let worked = 0;
  let lastSay = 0;
  while (mine < goalEvents) {
    engine.transact({ actor: 'system' }, (uow: UnitOfWork) => {
      // One outer command per ~40 goal steps (a savepoint each), with the filler between them.
      for (let step = 0; step < 40 && mine < goalEvents; step++) {
        const before = uow.appended.length;
        if (worked >= leaves.length) {
          const p = proposeTaskTree(app, team.owner, goalId, `Workstream ${root}.`, taskTree(root, 9, 10), OWNER);
          if (!p.approved) throw new Error(`proposal ${p.proposalId} was not auto-approved`);
          leaves = leaves.concat(leavesOf(p.taskIds));
          root += 1;
        } else {
          const agent = team.agents[worked % team.agents.length]!.speaker;
          workTask(app, agent, leaves[worked]!, worked);
          worked += 1;
        }
        mine += uow.appended.length - before;
        padTo(Math.min(totalEvents - 1, Math.round(mine * density)));
      }
    });
    mine = counted(); // the exact count: a few of the commands' events are on streams outside the goal's
    if (engine.head().position - lastSay >= totalEvents / 4) {
      lastSay = engine.head().position;
      say(`  ${lastSay.toLocaleString('en-US')} events…`);
    }
  }
  padTo(totalEvents);
  const streams = engine.db.prepare('SELECT COUNT(*) FROM streams').pluck().get() as number;
  return {
    team,
    goalId,
    goalEvents: counted(),
    events: engine.head().position,
    streams,
    pad: (count) => filler.append(count),
  };
}

function countGoalEvents(engine: Engine, goalId: number): number {
  const streams = goalStreams(engine.db, goalId);
  const version = engine.db.prepare('SELECT version FROM streams WHERE stream_id = ?').pluck();
  return streams.reduce((n, s) => n + ((version.get(s) as number | undefined) ?? 0), 0);
}

/** planTree numbers depth-first: the root, then each child followed by its ten leaves. */
function leavesOf(taskIds: readonly number[]): number[] {
  const out: number[] = [];
  for (let c = 0; c < 9; c++) out.push(...taskIds.slice(2 + c * 11, 2 + c * 11 + 10));
  return out;
}

/**
 * Filler events: comments on `card-N` streams, appended inside the command open on the engine (or one of
 * its own), up to ten at a time per stream (one appendToStream call, as a command that appends several).
 */
class Filler {
  private card = 0;
  private version = PER_STREAM;

  constructor(private readonly engine: Engine) {}

  append(count: number): void {
    const { engine } = this;
    for (let done = 0; done < count;) {
      engine.transact({ actor: 'bench' }, (uow) => {
        for (const end = Math.min(count, done + 20_000); done < end;) {
          if (this.version === PER_STREAM) {
            this.card += 1;
            this.version = 0;
          }
          const cardId = this.card;
          const n = Math.min(PER_STREAM - this.version, end - done);
          const events = Array.from({ length: n }, () => ({
            type: 'CardCommented',
            data: { cardId, text: PAYLOAD_TEXT },
          }));
          const stored = appendToStream(
            engine.db,
            `card-${cardId}`,
            this.version === 0 ? 'no_stream' : this.version,
            events,
            uow.meta,
            uow.now,
            this.version,
          );
          engine.projections.apply(engine.db, stored);
          uow.appended.push(...stored);
          this.version += n;
          done += n;
        }
      });
    }
  }
}
