import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicChannel, sendToChannel } from '../src/actions/channels.js';
import { claimTask, completeTask } from '../src/actions/tasks.js';
import { openApp, type App } from '../src/app.js';
import type { CommandOptions } from '../src/engine/handle.js';
import { newCommandId } from '../src/engine/ids.js';
import { seedBigLog, seedMessages, SMALL_GOAL_LEAVES, smallGoals } from './flat-data.js';
import { createTeam, seedGoal, type Team } from './goal-data.js';
import { figure, median, PAYLOAD_TEXT, seconds, type Figure } from './util.js';
import { type Speaker } from '../src/events/principals.js';

/**
 * Is a command's cost independent of its stream's length and of the log's size? Each figure is a rate
 * against the same work on a small stream or an empty store, measured in the same run: rounds alternate
 * baseline and measured side (so drift hits both), medians count, a warm-up round of each comes first.
 * The commands are the action functions the MCP tools call (no transport), durability NORMAL so that
 * fsync noise does not hide the CPU cost. Seeding is not measured; its time goes to stderr.
 *
 *   flat_send_message_per_s   send_message into a channel of `channelMessages` vs a fresh empty one (same app)
 *   flat_claim_complete_per_s claim_task + complete_task in one goal of `goalTasks` vs goals of 18 tasks (same app)
 *   flat_command_1m_per_s     send_message + claim/complete on a `logEvents`-event log vs a fresh data dir
 */
export interface FlatOptions {
  channelMessages: number;
  posts: number;
  goalTasks: number;
  pairs: number;
  logEvents: number;
  mixes: number;
  rounds: number;
}

export const FLAT_QUICK: FlatOptions = {
  channelMessages: 20_000,
  posts: 1_000,
  goalTasks: 2_000,
  pairs: 300,
  logEvents: 200_000,
  mixes: 150,
  rounds: 5,
};
export const FLAT_FULL: FlatOptions = {
  channelMessages: 100_000,
  posts: 3_000,
  goalTasks: 10_000,
  pairs: 1_000,
  logEvents: 1_000_000,
  mixes: 500,
  rounds: 7,
};

/** Seed times and other diagnostics: always on stderr (never in the figures, never on --json's stdout). */
const note = (s: string) => process.stderr.write(`  [flat] ${s}\n`);
const fmt = (n: number) => n.toLocaleString('en-US');

export function benchFlat(dir: string, o: FlatOptions, say: (s: string) => void): Record<string, Figure> {
  say(`flat: send_message into a ${fmt(o.channelMessages)}-message channel vs an empty one…`);
  const send = benchChannelLength(dir, o);
  say(
    `flat: claim_task + complete_task in a ${fmt(o.goalTasks)}-task goal vs goals of ${SMALL_GOAL_LEAVES + 2} tasks…`,
  );
  const pairs = benchGoalSize(dir, o);
  say(`flat: send_message + claim/complete on a ${fmt(o.logEvents)}-event log vs a fresh data dir…`);
  const mix = benchLogSize(dir, o);
  return { flat_send_message_per_s: send, flat_claim_complete_per_s: pairs, flat_command_1m_per_s: mix };
}

/** One side of a comparison: its store, `prepare` (untimed) before each round, `op` once per operation. */
interface Side {
  app: App;
  prepare?(round: number): void;
  op(i: number): void;
}

/**
 * Ops/s medians of both sides over `rounds` rounds of `n` ops each, after a warm-up round of each (round
 * -1, n/5 ops). Within a round the sides alternate in ten blocks, so a burst of load from elsewhere on the
 * machine lands on both sides alike instead of on whichever round it happened to hit. Each block starts
 * on a checkpointed WAL (untimed), so no block stalls on an automatic checkpoint's fsync — I/O that would
 * land on whichever side crossed the threshold. The figure is wall time, as in the rest of the suite; the
 * ratio of process CPU time (which a busy machine's scheduling does not inflate) is returned for stderr.
 */
function alternate(
  rounds: number,
  n: number,
  baseline: Side,
  subject: Side,
): { baseline: number; subject: number; cpuRatio: number } {
  const BLOCKS = 10;
  const block = (side: Side, from: number, to: number, took: { wall: number; cpu: number }) => {
    side.app.engine.db.pragma('wal_checkpoint(PASSIVE)');
    const cpu = process.cpuUsage();
    took.wall += seconds(() => {
      for (let j = from; j < to; j++) side.op(j);
    });
    const used = process.cpuUsage(cpu);
    took.cpu += (used.user + used.system) / 1e6;
  };
  const round = (r: number, count: number) => {
    baseline.prepare?.(r);
    subject.prepare?.(r);
    const base = { wall: 0, cpu: 0 };
    const subj = { wall: 0, cpu: 0 };
    for (let b = 0, i = 0; b < BLOCKS; b++) {
      const end = Math.round(((b + 1) * count) / BLOCKS);
      block(baseline, i, end, base);
      block(subject, i, end, subj);
      i = end;
    }
    return { base, subj };
  };
  round(-1, Math.ceil(n / 5));
  const rates = { baseline: [] as number[], subject: [] as number[], cpuRatio: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const { base, subj } = round(r, n);
    rates.baseline.push(n / base.wall);
    rates.subject.push(n / subj.wall);
    rates.cpuRatio.push(base.cpu / subj.cpu);
  }
  return { baseline: median(rates.baseline), subject: median(rates.subject), cpuRatio: median(rates.cpuRatio) };
}

/** What src/mcp/call-pipeline.ts hands a tool: a fresh command id, not recorded (no idempotency key). */
function command(by: Speaker): CommandOptions {
  const commandId = newCommandId();
  return {
    actor: `${by.key.startsWith('user-') ? 'user' : 'agent'}:${by.name}`,
    commandId,
    record: false,
    correlationId: commandId,
  };
}

/** send_message's handler with `channel_id` (src/mcp/tools/channels.ts): sendToChannel, no metadata. */
function sendMessage(app: App, by: Speaker, channelId: number): void {
  sendToChannel(
    app,
    by,
    { id: channelId },
    { body: PAYLOAD_TEXT, subject: null, priority: 5, metadata: null, replyTo: null },
    command(by),
  );
}

/** claim_task then complete_task (auto verifier → done), as the two tools call them. */
function workPair(app: App, by: Speaker, taskId: number): void {
  claimTask(app, by, taskId, command(by));
  const task = completeTask(app, by, taskId, 'Implemented and tested.', [], command(by));
  if (task.status !== 'done') throw new Error(`task ${taskId} is ${task.status} after complete_task, not done`);
}

function benchChannelLength(dir: string, o: FlatOptions): Figure {
  let app = open(dir, 'flat-channel');
  try {
    const team = createTeam(app, 10, ['send_message']);
    const tenant = team.owner.tenant;
    const agents = team.agents.map((a) => a.speaker);
    const full = createPublicChannel(app, tenant, 'history', 'A long-lived channel.', { actor: 'user:owner' });
    const took = seconds(() => seedMessages(app, full, [team.owner, ...agents], o.channelMessages));
    note(
      `seeded ${fmt(o.channelMessages)} messages into one channel in ${took.toFixed(1)} s (log: ${fmt(app.engine.head().position)} events)`,
    );
    // A restart: this process has never loaded the stream, so the first post loads it cold (from its snapshot, if any).
    app.engine.close();
    app = open(dir, 'flat-channel');
    note(
      `first send_message into it after a restart (cold load): ${seconds(() => sendMessage(app, agents[0]!, full)).toFixed(3)} s`,
    );
    let empty = 0;
    const rates = alternate(
      o.rounds,
      o.posts,
      {
        app,
        prepare: (r) => {
          empty = createPublicChannel(app, tenant, `empty-${r + 1}`, 'A new channel.', { actor: 'user:owner' });
        },
        op: (i) => sendMessage(app, agents[i % agents.length]!, empty),
      },
      { app, op: (i) => sendMessage(app, agents[i % agents.length]!, full) },
    );
    note(`send_message: CPU-time ratio ${rates.cpuRatio.toFixed(3)}`);
    const held = app.engine.db
      .prepare('SELECT count(*) FROM messages WHERE channel_id = ?')
      .pluck()
      .get(full) as number;
    const posted = 1 + Math.ceil(o.posts / 5) + o.rounds * o.posts;
    if (held !== o.channelMessages + posted)
      throw new Error(`channel ${full} holds ${held} messages, expected ${o.channelMessages + posted}`);
    return {
      ...figure(rates.subject, 'messages/s', rates.baseline),
      data: `${fmt(o.channelMessages)}-message channel vs empty`,
    };
  } finally {
    app.engine.close();
  }
}

function benchGoalSize(dir: string, o: FlatOptions): Figure {
  const app = open(dir, 'flat-goal');
  try {
    const team = createTeam(app, 10, ['claim_task', 'complete_task']);
    const agents = team.agents.map((a) => a.speaker);
    const needed = Math.ceil(o.pairs / 5) + o.rounds * o.pairs;
    let big: number[] = [];
    // Trees of 10 × 20 leaves (211 tasks), as bench/claim-complete.ts: a proposal's message stays within 16,000 characters.
    const roots = Math.ceil(o.goalTasks / 211);
    let took = seconds(() => {
      big = seedGoal(app, team.owner, 1, { roots, children: 10, leaves: 20 }).leaves;
    });
    note(`seeded one goal of ${fmt(roots * 211)} tasks in ${took.toFixed(1)} s`);
    if (big.length < needed) throw new Error(`the big goal has ${big.length} leaves, ${needed} needed`);
    let small: number[] = [];
    const goals = Math.ceil(needed / SMALL_GOAL_LEAVES);
    took = seconds(() => {
      small = smallGoals(app, team.owner, goals, 2);
    });
    note(`seeded ${fmt(goals)} goals of ${SMALL_GOAL_LEAVES + 2} tasks in ${took.toFixed(1)} s`);
    // Both sides take leaves in order from their own list; the small side moves on to the next goal when one is done.
    const side = (leaves: number[]): Side => {
      let next = 0;
      return { app, op: () => workPair(app, agents[next % agents.length]!, leaf(leaves, next++)) };
    };
    const rates = alternate(o.rounds, o.pairs, side(small), side(big));
    note(`claim/complete: CPU-time ratio ${rates.cpuRatio.toFixed(3)}`);
    return {
      ...figure(rates.subject, 'pairs/s', rates.baseline),
      data: `${fmt(roots * 211)}-task goal vs ${SMALL_GOAL_LEAVES + 2}-task goals`,
    };
  } finally {
    app.engine.close();
  }
}

function benchLogSize(dir: string, o: FlatOptions): Figure {
  const fresh = open(dir, 'flat-fresh');
  const big = open(dir, 'flat-big');
  try {
    const needed = Math.ceil(o.mixes / 5) + o.rounds * o.mixes;
    const sides = [fresh, big].map((app) => {
      const team = createTeam(app, 10, ['send_message', 'claim_task', 'complete_task']);
      if (app === big) {
        const took = seconds(() => seedBigLog(app, team, o.logEvents));
        note(`seeded a log of ${fmt(app.engine.head().position)} events in ${took.toFixed(1)} s`);
      }
      return mixSide(app, team, smallGoals(app, team.owner, Math.ceil(needed / SMALL_GOAL_LEAVES), 1));
    });
    note(
      `fresh data dir: ${fmt(fresh.engine.head().position)} events before the rounds; big: ${fmt(big.engine.head().position)}`,
    );
    const rates = alternate(o.rounds, o.mixes, sides[0]!, sides[1]!);
    note(`mix: CPU-time ratio ${rates.cpuRatio.toFixed(3)}`);
    // Three commands per mix: send_message, claim_task, complete_task.
    return {
      ...figure(3 * rates.subject, 'commands/s', 3 * rates.baseline),
      data: `${fmt(o.logEvents)}-event log vs fresh`,
    };
  } finally {
    fresh.engine.close();
    big.engine.close();
  }
}

/** The mix: a message into this round's own new channel (so stream length stays out of it), then a task's claim and completion. */
function mixSide(app: App, team: Team, leaves: readonly number[]): Side {
  const agents = team.agents.map((a) => a.speaker);
  let channel = 0;
  let next = 0;
  return {
    app,
    prepare: (r) => {
      channel = createPublicChannel(app, team.owner.tenant, `mix-${r + 1}`, "This round's channel.", {
        actor: 'user:owner',
      });
    },
    op: () => {
      const agent = agents[next % agents.length]!;
      sendMessage(app, agent, channel);
      workPair(app, agent, leaf(leaves, next++));
    },
  };
}

const leaf = (leaves: readonly number[], i: number): number => {
  if (i >= leaves.length) throw new Error(`ran out of leaf tasks after ${leaves.length}`);
  return leaves[i]!;
};

function open(dir: string, name: string): App {
  const dataDir = join(dir, name);
  mkdirSync(dataDir, { recursive: true });
  return openApp({ dataDir, durability: 'normal' });
}
