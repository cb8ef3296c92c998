import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApp } from '../src/app.js';
import type { Durability } from '../src/engine/db.js';
import { Engine } from '../src/engine/engine.js';
import { EVENT_COLUMNS, type EventRow } from '../src/engine/event.js';
import { canonicalRow } from '../src/engine/hash.js';
import { extendMerkle } from '../src/engine/merkle-store.js';
import { startAutoCheckpoints } from '../src/evidence/auto-checkpoint.js';
import { exportGoalBundle } from '../src/evidence/bundle-export.js';
import { replayBundle } from '../src/evidence/bundle-replay.js';
import { checkBundle } from '../src/evidence/bundle-verify.js';
import { latestCheckpoint } from '../src/evidence/checkpoint.js';
import { signCheckpoint } from '../src/evidence/sign.js';
import { goalStreams } from '../src/evidence/goal-streams.js';
import { streamsProjection } from '../src/projections/streams.js';
import { loadOrCreateSigningKey } from '../src/signing-key.js';
import { cardProjections } from '../testkit/card-projections.js';
import { buildEvidenceLog } from './evidence-data.js';
import { figure, median, prng, seconds, type Figure } from './util.js';
import { CardWorkload } from './workload.js';

/**
 * Issue 17's figures: what signed evidence costs.
 *
 * evidence_append_commands_per_s: commands/s of bench/commands.ts's card mix while the log's Merkle
 *   tree is kept up (extendMerkle every 1,000 events, in the loop) against the same mix on an identically
 *   seeded store without it. evidence_append_serve_commands_per_s: the same mix with serve's automatic
 *   checkpoints every 1,000 events (tree, stream heads, signature) signed on serve's worker thread. All
 *   stores carry the `streams` catalog, as serve's does (the heads come from it). Variants alternate
 *   after a warm-up; the rate is all commands over all time of each variant. Durability NORMAL, where the
 *   upkeep weighs most (under FULL every command waits for an fsync).
 * evidence_export_s: exportGoalBundle (plus writing the file, as `colony export` does) of a goal of about
 *   10,000 events spread through a 1,000,000-event log (bench/evidence-data.ts), the tree cache already
 *   up to date (serve's checkpoints keep it so). Baseline: the same rows read raw, stream by stream, and
 *   JSON.stringify'd. Bundle bytes against those raw bytes; proof hashes per event against log2 n.
 * evidence_merkle_extend_s: extendMerkle on that log from an empty cache (the one-time cost when a log
 *   written before Colony kept a Merkle tree signs its first checkpoint). Baseline: a raw loop that reads every row's hash in
 *   pages and computes its leaf hash.
 * evidence_checkpoint_ms (diagnostic): signCheckpoint at the head of that big log, 1,000 events after the
 *   previous one. Baseline: the time 1,000 commands of the mix take without the tree (from
 *   evidence_append), so the ratio is the share of append time a checkpoint would cost at that size.
 * evidence_verify_events_per_s: checkBundle (checks 1–6) of that bundle; evidence_replay_events_per_s:
 *   replayBundle (check 7); evidence_verify_tool_events_per_s: tools/verify-bundle.mjs in a child process
 *   (node's start-up included), all against a raw sha256 loop over the same events' canonical row text.
 *   evidence_verify_vs_parse_floor (diagnostic): checkBundle against the floor of reading the format at
 *   all — JSON.parse of the bundle's bytes plus that sha256 loop.
 * Timed runs alternate subject and baseline; the faster run of each counts (as in bench/rebuild-child.ts),
 * and a baseline of a few milliseconds is the fastest of several back-to-back runs each time.
 */
export interface EvidenceOptions {
  quick: boolean;
}

export async function benchEvidence(
  dir: string,
  o: EvidenceOptions,
  say: (s: string) => void,
): Promise<Record<string, Figure>> {
  const results: Record<string, Figure> = {};
  say("  appending with and without the Merkle tree and serve's checkpoints (every 1,000 events), durability NORMAL…");
  const normal = await benchEvidenceAppend(dir, 'normal', o.quick ? 2000 : 4000, o.quick ? 3 : 4);
  results.evidence_append_commands_per_s = normal.tree;
  results.evidence_append_serve_commands_per_s = normal.serve;
  const events = o.quick ? 100_000 : 1_000_000;
  const goalEvents = o.quick ? 2_000 : 10_000;
  Object.assign(
    results,
    await benchEvidenceExport(
      dir,
      {
        events,
        goalEvents,
        runs: 2,
        checkpoints: o.quick ? 3 : 2,
        msPer1000: normal.msPer1000,
      },
      say,
    ),
  );
  return results;
}

/**
 * A/B commands/s of the card mix: plain, against the same mix with the log's Merkle tree maintained —
 * `tree`: extendMerkle whenever the log has grown by 1,000 events, in the command loop (the tree's own
 * upkeep, what the target is about); `serve`: serve's automatic checkpoints every 1,000 events
 * (tree, stream heads, signature), signed on its worker thread while the loop goes on (it yields every 50
 * commands, as a server does between requests). Also how long 1,000 plain commands take (ms).
 */
export async function benchEvidenceAppend(
  dir: string,
  durability: Durability,
  n: number,
  rounds: number,
): Promise<{ tree: Figure; serve: Figure; msPer1000: number }> {
  const keyDir = join(dir, `evidence-append-${durability}`);
  mkdirSync(keyDir, { recursive: true });
  loadOrCreateSigningKey(keyDir);
  const plain = seeded(join(keyDir, 'plain.db'), durability, n);
  const tree = seeded(join(keyDir, 'tree.db'), durability, n);
  const served = seeded(join(keyDir, 'colony.db'), durability, n); // the worker opens <data>/colony.db
  const auto = startAutoCheckpoints(served, keyDir, {
    everyEvents: 1000,
    everyMinutes: 0,
    durability,
    intervalMs: 2 ** 31 - 1,
  });
  try {
    signCheckpoint(served, keyDir, 'auto', 'serve'); // the seed is covered, as serve's checkpoints would have covered it
    extendMerkle(tree.db);
    const work = {
      plain: new CardWorkload(plain, prng(42)),
      tree: new CardWorkload(tree, prng(42)),
      serve: new CardWorkload(served, prng(42)),
    };
    let folded = tree.head().position;
    const runPlain = async (k: number) => {
      for (let i = 0; i < k; i++) work.plain.step();
    };
    const runTree = async (k: number) => {
      for (let i = 0; i < k; i++) {
        work.tree.step();
        if (i % 50 === 49 && tree.head().position - folded >= 1000)
          folded = (extendMerkle(tree.db), tree.head().position);
      }
    };
    const runServe = async (k: number) => {
      for (let i = 0; i < k; i++) {
        work.serve.step();
        if (i % 50 === 49) {
          void auto.look();
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    };
    await runPlain(Math.ceil(n / 5)); // warm-up
    await runTree(Math.ceil(n / 5));
    await runServe(Math.ceil(n / 5));
    const before = latestCheckpoint(served.db)!.n;
    const time = { plain: 0, tree: 0, serve: 0 };
    for (let r = 0; r < rounds; r++) {
      // A/B/C, A/B/C…
      time.plain += await secondsAsync(() => runPlain(n));
      time.tree += await secondsAsync(() => runTree(n));
      time.serve += await secondsAsync(() => runServe(n));
    }
    await auto.look();
    const signed = latestCheckpoint(served.db)!.n - before;
    const streams = served.db.prepare('SELECT COUNT(*) FROM streams').pluck().get() as number;
    const rate = (t: number) => (n * rounds) / t;
    const size = `${rounds} × ${n.toLocaleString('en-US')} commands per variant; ${streams.toLocaleString('en-US')} streams, ${served.head().position.toLocaleString('en-US')} events`;
    return {
      tree: {
        ...figure(rate(time.tree), 'commands/s', rate(time.plain)),
        data: `${size}; extendMerkle every 1,000 events in the loop`,
      },
      serve: {
        ...figure(rate(time.serve), 'commands/s', rate(time.plain)),
        data: `${size}; ${signed} checkpoints signed on serve's worker thread`,
      },
      msPer1000: (1000 * time.plain * 1000) / (n * rounds),
    };
  } finally {
    await auto.stop();
    plain.close();
    tree.close();
    served.close();
  }
}

async function secondsAsync(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

/** The same seeding as bench/commands.ts, plus the streams catalog serve always has. */
function seeded(file: string, durability: Durability, n: number): Engine {
  const engine = Engine.open({ file, durability, projections: [...cardProjections, streamsProjection] });
  new CardWorkload(engine, prng(1)).seed(Math.max(200, Math.floor(n / 2)), 8);
  return engine;
}

interface ExportOptions {
  events: number;
  goalEvents: number;
  runs: number;
  checkpoints: number;
  msPer1000: number;
}

export async function benchEvidenceExport(
  dir: string,
  o: ExportOptions,
  say: (s: string) => void,
): Promise<Record<string, Figure>> {
  const dataDir = join(dir, 'evidence');
  mkdirSync(dataDir, { recursive: true });
  const app = openApp({ dataDir, durability: 'normal' });
  const { engine } = app;
  const { db } = engine;
  const results: Record<string, Figure> = {};
  const bundleFile = join(dataDir, 'goal.bundle.json');
  let rows: EventRow[] = [];
  let publicKey = '';
  try {
    say(`  a ${o.goalEvents.toLocaleString('en-US')}-event goal in a ${o.events.toLocaleString('en-US')}-event log…`);
    let log!: ReturnType<typeof buildEvidenceLog>;
    const built = seconds(() => {
      log = buildEvidenceLog(app, o.events, o.goalEvents, say);
    });
    const size = `${log.goalEvents.toLocaleString('en-US')}-event goal in a ${log.events.toLocaleString('en-US')}-event log of ${log.streams.toLocaleString('en-US')} streams`;
    say(`  built in ${built.toFixed(1)} s (${size}); extendMerkle from an empty cache…`);

    const extendS = seconds(() => extendMerkle(db));
    const rawLeafS = seconds(() => rawLeafLoop(engine));
    results.evidence_merkle_extend_s = {
      ...figure(extendS, 's', rawLeafS),
      data: `${log.events.toLocaleString('en-US')} events`,
    };

    say('  signCheckpoint at the head of that log, 1,000 events after the last…');
    signCheckpoint(engine, dataDir, 'auto', 'serve');
    const checkpointMs: number[] = [];
    for (let r = 0; r < o.checkpoints; r++) {
      log.pad(1000);
      const t0 = performance.now();
      signCheckpoint(engine, dataDir, 'auto', 'serve');
      checkpointMs.push(performance.now() - t0);
    }
    const streamCount = db.prepare('SELECT COUNT(*) FROM streams').pluck().get() as number;
    results.evidence_checkpoint_ms = {
      ...figure(median(checkpointMs), 'ms', o.msPer1000),
      data: `${engine.head().position.toLocaleString('en-US')} events, ${streamCount.toLocaleString('en-US')} streams`,
    };

    say('  export of the goal, and its rows read raw…');
    const streams = goalStreams(db, log.goalId);
    const select = db.prepare(
      `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id = ? AND position <= ? ORDER BY version`,
    );
    let rawText = '';
    const raw = () => {
      const head = engine.head().position;
      rows = streams.flatMap((s) => select.all(s, head) as EventRow[]);
      rawText = JSON.stringify(rows);
    };
    let text = '';
    let proofHashes = 0;
    let events = 0;
    let treeSize = 0;
    const doExport = () => {
      const r = exportGoalBundle(engine, dataDir, log.goalId);
      writeFileSync(bundleFile, r.text);
      text = r.text;
      events = r.bundle.events.length;
      proofHashes = r.bundle.events.reduce((n, e) => n + e.proof.length, 0);
      treeSize = r.bundle.checkpoint.body.treeSize;
      publicKey = r.bundle.publicKey;
    };
    const times = { raw: [] as number[], export: [] as number[] };
    for (let r = 0; r < o.runs; r++) {
      times.raw.push(fastest(raw, 5));
      times.export.push(seconds(doExport));
    }
    if (rows.length !== events)
      throw new Error(`the bundle has ${events} events but the goal's streams hold ${rows.length}`);
    const data = `${events.toLocaleString('en-US')}-event goal in a ${treeSize.toLocaleString('en-US')}-event log of ${streamCount.toLocaleString('en-US')} streams`;
    results.evidence_export_s = { ...figure(Math.min(...times.export), 's', Math.min(...times.raw)), data };
    results.evidence_export_bytes = { ...figure(Buffer.byteLength(text), 'bytes', Buffer.byteLength(rawText)), data };
    results.evidence_proof_hashes = { ...figure(proofHashes / events, 'hashes/event', Math.log2(treeSize)), data };
  } finally {
    engine.close();
  }
  say('  verify-bundle of that bundle: checks 1–6, the replay, tools/verify-bundle.mjs…');
  Object.assign(results, benchEvidenceVerify(bundleFile, rows, publicKey, o.runs));
  return results;
}

/**
 * The fastest of `reps` runs of a cheap baseline (s): a run of a few milliseconds is easily stretched by one
 * preemption on a busy machine, and the subject's long runs average such stalls out instead.
 */
function fastest(fn: () => void, reps: number): number {
  let best = Infinity;
  for (let i = 0; i < reps; i++) best = Math.min(best, seconds(fn));
  return best;
}

/** Reads every row's hash in pages and computes its leaf hash: the floor under extendMerkle. */
function rawLeafLoop(engine: Engine): void {
  const page = engine.db.prepare(
    'SELECT position, hash FROM es_events WHERE position > ? ORDER BY position LIMIT 10000',
  );
  const zero = Buffer.from([0]);
  for (let after = 0; ;) {
    const rows = page.all(after) as { position: number; hash: string }[];
    for (const r of rows) createHash('sha256').update(zero).update(Buffer.from(r.hash, 'hex')).digest();
    if (rows.length < 10000) return;
    after = rows[rows.length - 1]!.position;
  }
}

const TOOL = fileURLToPath(new URL('../tools/verify-bundle.mjs', import.meta.url));

export function benchEvidenceVerify(
  file: string,
  rows: readonly EventRow[],
  publicKey: string,
  runs: number,
): Record<string, Figure> {
  const bytes = readFileSync(file);
  const texts = rows.map((r) => r.prev_hash + canonicalRow(r));
  const n = rows.length;
  const times = {
    raw: [] as number[],
    floor: [] as number[],
    check: [] as number[],
    replay: [] as number[],
    tool: [] as number[],
  };
  for (let r = 0; r < runs; r++) {
    const raw = fastest(() => {
      for (const t of texts) createHash('sha256').update(t).digest('hex');
    }, 10);
    const floor = fastest(() => {
      JSON.parse(bytes.toString('utf8'));
      for (const t of texts) createHash('sha256').update(t).digest('hex');
    }, 3);
    let checked!: ReturnType<typeof checkBundle>;
    const check = seconds(() => {
      checked = checkBundle(bytes, [publicKey]);
    });
    if (!checked.ok) throw new Error(`the bundle does not verify: ${checked.failure.code} ${checked.failure.message}`);
    if (checked.summary.events !== n) throw new Error(`the bundle has ${checked.summary.events} events, not ${n}`);
    const bundle = checked.bundle;
    const replay = seconds(() => {
      const failure = replayBundle(bundle);
      if (failure) throw new Error(`the replay fails: ${failure.code} ${failure.message}`);
    });
    const tool = seconds(() => {
      const child = spawnSync(process.execPath, [TOOL, file, '--key', publicKey, '--json'], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (child.status !== 0) throw new Error(`tools/verify-bundle.mjs failed: ${child.stderr.trim()}`);
    });
    times.raw.push(raw);
    times.floor.push(floor);
    times.check.push(check);
    times.replay.push(replay);
    times.tool.push(tool);
  }
  const best = (xs: number[]) => Math.min(...xs);
  const rate = (xs: number[]) => n / best(xs);
  const data = `${n.toLocaleString('en-US')} events, ${(bytes.length / 1e6).toFixed(1)} MB bundle`;
  return {
    evidence_verify_events_per_s: { ...figure(rate(times.check), 'events/s', rate(times.raw)), data },
    evidence_verify_vs_parse_floor: { ...figure(rate(times.check), 'events/s', rate(times.floor)), data },
    evidence_replay_events_per_s: { ...figure(rate(times.replay), 'events/s', rate(times.raw)), data },
    evidence_verify_tool_events_per_s: {
      ...figure(rate(times.tool), 'events/s', rate(times.raw)),
      data: `${data}; a child process, node's start included`,
    },
  };
}
