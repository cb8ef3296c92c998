import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { canonicalize } from '../../src/canonical.js';
import nacl from 'tweetnacl';
import { sendToChannel } from '../../src/actions/channels.js';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner } from '../../src/actions/principals.js';
import { proposeTaskTree } from '../../src/actions/proposals.js';
import { openApp } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { getAgentByName } from '../../src/projections/principal-queries.js';
import type { Bundle, BundleEvent } from '../../src/evidence/bundle.js';
import { exportGoalBundle, type ExportResult } from '../../src/evidence/bundle-export.js';
import type { SignedCheckpoint } from '../../src/evidence/checkpoint.js';
import { byUtf8 } from '../../src/evidence/goal-streams.js';
import { verifySince } from '../../src/evidence/since.js';
import { fingerprint, keyFromSeed, publicKeyText } from '../../src/signing-key.js';
import { colony } from '../helpers/cli.js';
import {
  bundleText,
  cloneBundle,
  colonyVerdict,
  FIXTURE_DIR,
  GOLDEN_SEED,
  goldenBundleText,
  merkleVectors,
  parseBundle,
  rewriteLog,
  staticVerdict,
  toolVerdict,
  toolVerdictInProcess,
  VERIFY_TOOL,
  type Verdict,
} from '../helpers/evidence.js';
import { goalWithTree, world, type World } from '../helpers/resource-world.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Goal bundles and signed checkpoints on real data:
 * 1. a world with two goals, task trees, a specialist spawned through propose_agent, a helper under another
 *    agent, and a run, exported and verified through the real CLI (`key show`, `export`, `verify-bundle
 *    --key / --key-file`) and tools/verify-bundle.mjs;
 * 2. every kind of tampering, caught and named — Colony's checkBundle (+ replay) and the independent tool
 *    agree on the code and the event or stream, except where only Colony's replay can tell (the snapshot, a
 *    properly proven stream of another goal). The tool's code runs in-process for the many cases (its text,
 *    loaded as a module: test/helpers/evidence.ts) and as its own process for one file of every verdict;
 * 3. `verify --since` catches a chain rewritten and fully re-hashed behind Colony's back, which plain
 *    `verify` (without its anchor file) cannot;
 * 4. properties: random small logs export to bundles that verify and replay, and any single changed byte
 *    fails; on any single changed byte the two verifiers' checks 1–7 agree;
 * 5. golden fixtures (fixtures/bundle/) pin the tree hashing and the file format byte for byte.
 * An object with a "toJSON" key (which json-canonicalize left unsorted) is canonical since src/canonical.ts.
 */
const scratch = tempDir('colony-evidence-');
after(() => scratch.cleanup());

const keysOf = (o: object): string[] => Object.keys(o).sort();
const withoutIo = ({ ok, code, position, streamId }: Verdict): Verdict => ({
  ok,
  ...(code !== undefined ? { code } : {}),
  ...(position !== undefined ? { position } : {}),
  ...(streamId !== undefined ? { streamId } : {}),
});
const json = <T = Record<string, unknown>>(text: string): T => JSON.parse(text) as T;

// ------------------------------------------------------------------------------------- 1 and 2: a world

let w: World;
let dir: string;
let goalA: { goalId: number; taskIds: number[] };
let goalB: { goalId: number; taskIds: number[] };
let runId: number;
let writerId: number;

/** A run of `agentId` on `taskId` with one transcript line, finished. */
function runOnTask(agentId: number, taskId: number, said: string): number {
  return w.run(agentId, [['agent', said]], { tokensIn: 10, tokensOut: 20, costCents: 1 }, taskId).runId;
}

before(async () => {
  w = await world();
  dir = w.f.dataDir;
  // Goal A: coordinated by an agent of the owner's, approved by the owner's reactions in #approvals (human
  // mode); the coordinator spawns a specialist through propose_agent; a helper spawned under another agent
  // claims a leaf and runs on it; the owner posts in the goal's channel.
  const boss = w.agent('boss', {
    toolScope: [
      'propose_agent',
      'propose_task_tree',
      'claim_task',
      'complete_task',
      'report_usage',
      'send_message',
      'get_goal',
    ],
  });
  const bossCaller = w.callerOf(boss.token);
  const created = await w.tool(w.owner, 'create_goal', {
    title: 'Ship the docs',
    description: 'Ship the docs: the whole of it, done well.',
    approval_mode: 'human',
    coordinator_config: 'boss',
    budget_dollars_cents: 1000,
  });
  const goalId = created.goal_id as number;
  const tree = await w.tool(bossCaller, 'propose_task_tree', {
    goal_id: goalId,
    tree: {
      title: 'Root task',
      description: 'The root of the work to do.',
      children: [
        { title: 'Write the outline', description: 'A part of the work to do.' },
        { title: 'Write the pages', description: 'Another part of the work.' },
      ],
    },
  });
  const approved = await w.tool(w.owner, 'react', { message_id: tree.proposal_message_id, reaction: 'approve' });
  goalA = { goalId, taskIds: (approved.decision as { task_ids: number[] }).task_ids };
  const spawn = await w.tool(bossCaller, 'propose_agent', {
    goal_id: goalId,
    parent_task_id: goalA.taskIds[2],
    name: 'writer',
    model: 'test-model',
    system_prompt: 'You write the pages, carefully and well.',
    tool_scope: ['claim_task', 'complete_task'],
    autonomy_tier: 'supervised',
    reason: 'Someone has to write the pages.',
  });
  const spawned = await w.tool(w.owner, 'react', { message_id: spawn.approval_message_id, reaction: 'approve' });
  writerId = (spawned.decision as { agent_id: number }).agent_id;
  const lead = w.agent('lead');
  const helper = w.agent('helper', { parentId: lead.agentId });
  await w.tool(w.callerOf(helper.token), 'claim_task', { task_id: goalA.taskIds[1] });
  runId = runOnTask(helper.agentId, goalA.taskIds[1]!, 'The outline is written.');
  await w.tool(w.owner, 'send_message', {
    channel: 'goal-ship-the-docs',
    body: 'Progress: the outline is done — "quoted", é, 😀.',
  });
  // Goal B: the default coordinator, auto mode, a leaf claimed by another agent.
  goalB = await goalWithTree(w, w.owner, 'Fix the build');
  const other = w.agent('other');
  await w.tool(w.callerOf(other.token), 'claim_task', { task_id: goalB.taskIds[1] });
});
after(() => w.f.close());

describe('a goal bundle end to end through the CLI', () => {
  it('export --json, then verify-bundle --key, the independent tool --key, and verify-bundle --key-file all accept it', () => {
    const show = colony(['key', 'show', '--json', '--data', dir]);
    assert.equal(show.code, 0, show.stderr);
    const keys = json<{
      current: string;
      keys: { keyId: string; publicKey: string; since: string; retiredAt: string | null }[];
    }>(show.stdout);
    const current = keys.keys.find((k) => k.keyId === keys.current)!;
    assert.ok(current, 'the current key is listed');
    assert.equal(fingerprint(Buffer.from(current.publicKey, 'base64')), current.keyId);
    const keyFile = join(scratch.dir, 'keys.json');
    writeFileSync(keyFile, show.stdout);

    const out = join(scratch.dir, 'goal-a.bundle.json');
    const exported = colony(['export', '--goal', String(goalA.goalId), '--out', out, '--json', '--data', dir]);
    assert.equal(exported.code, 0, exported.stderr);
    const summary = json<{
      path: string;
      goal_id: number;
      events: number;
      streams: number;
      bytes: number;
      checkpoint: { tree_size: number; root_hash: string; time: string; key_id: string; reused: boolean };
    }>(exported.stdout);
    assert.deepEqual(keysOf(summary), ['bytes', 'checkpoint', 'events', 'goal_id', 'path', 'streams']);
    assert.deepEqual(keysOf(summary.checkpoint), ['key_id', 'reused', 'root_hash', 'time', 'tree_size']);
    const text = readFileSync(out, 'utf8');
    const bundle = parseBundle(text);
    const body = bundle.checkpoint.body;
    assert.equal(summary.path, out);
    assert.equal(summary.goal_id, goalA.goalId);
    assert.equal(summary.bytes, statSync(out).size);
    assert.equal(summary.events, bundle.events.length);
    assert.equal(summary.streams, bundle.streams.length);
    assert.deepEqual(summary.checkpoint, {
      tree_size: body.treeSize,
      root_hash: body.rootHash,
      time: body.time,
      key_id: keys.current,
      reused: false,
    });
    assert.equal(bundle.publicKey, current.publicKey);
    assert.equal(text, bundleText(bundle), 'the file is its own canonical JSON and one LF');

    // The goal's whole history: its run, the spawned helper and its parent, the owner — nothing of goal B.
    const streams = bundle.streams.map((s) => s.streamId);
    const agents = ['boss', 'lead', 'helper'].map(
      (name) => `agent-${getAgentByName(w.f.app.engine.db, w.f.owner.userId, name)!.agentId}`,
    );
    for (const s of [
      `goal-${goalA.goalId}`,
      `run-${runId}`,
      ...goalA.taskIds.map((t) => `task-${t}`),
      'user-1',
      `agent-${writerId}`,
      ...agents,
    ]) {
      assert.ok(streams.includes(s), `${s} is in the bundle`);
    }
    assert.ok(!streams.includes(`goal-${goalB.goalId}`));
    assert.ok(!goalB.taskIds.some((t) => streams.includes(`task-${t}`)));
    assert.ok(bundle.events.length >= 20, `${bundle.events.length} events`);
    assert.equal(body.treeSize, w.f.app.engine.head().position, 'the checkpoint is the log at export');

    const ok = new RegExp(
      `^ok: goal ${goalA.goalId}, ${bundle.events.length} events in ${bundle.streams.length} streams, checkpoint of ${body.treeSize} events ` +
        `\\(root ${body.rootHash}\\) signed at ${body.time.replace(/\./g, '\\.')} by ${keys.current.replace(/[+/]/g, '\\$&')}`,
    );
    const nowhere = join(scratch.dir, 'no-data-dir');
    const verified = colony(['verify-bundle', out, '--key', current.publicKey, '--data', nowhere]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.ok(!existsSync(nowhere), 'verify-bundle needs no data dir and makes none');
    assert.match(verified.stdout, ok);
    assert.match(verified.stdout, /; the replay gives the bundle's snapshot\n$/);
    assert.equal(verified.stderr, '', 'no warning: the key was checked');

    const tool = toolVerdict(out, [current.publicKey]);
    assert.equal(tool.exit, 0, tool.stderr);
    assert.equal(tool.ok, true);
    const human = spawnSync(process.execPath, [VERIFY_TOOL, out, '--key', keys.current], { encoding: 'utf8' });
    assert.equal(human.status, 0, human.stderr);
    assert.match(human.stdout, ok);
    assert.equal(human.stderr, '');

    const fromFile = colony(['verify-bundle', out, '--key-file', keyFile]);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.match(fromFile.stdout, ok);
  });
});

describe('tampered bundles: caught, named, and the same verdict from Colony and from the independent tool', () => {
  let a: ExportResult;
  let b: ExportResult;
  let publicKey: string;
  let n = 0;

  before(() => {
    // Both goals at one checkpoint: the second export reuses it because the log did not grow in between.
    a = exportGoalBundle(w.f.app.engine, dir, goalA.goalId);
    b = exportGoalBundle(w.f.app.engine, dir, goalB.goalId);
    assert.equal(b.reusedCheckpoint, true);
    assert.deepEqual(b.bundle.checkpoint, a.bundle.checkpoint);
    publicKey = a.bundle.publicKey;
    assert.deepEqual(colonyVerdict(Buffer.from(a.text), [publicKey]), { ok: true });
    assert.deepEqual(colonyVerdict(Buffer.from(b.text), [publicKey]), { ok: true });
  });

  /** One tampered file per verdict code, run again at the end through the tool as its own process. */
  const samples = new Map<string, { file: string; trusted: string[]; stdout: string }>();

  /** Writes the tampered file and returns both verdicts (the tool's exit code must match its verdict). */
  function verdicts(
    tampered: Bundle | string,
    trusted: string[] = [publicKey],
  ): { file: string; colony: Verdict; tool: Verdict } {
    const file = join(scratch.dir, `tampered-${++n}.json`);
    const text = typeof tampered === 'string' ? tampered : bundleText(tampered);
    writeFileSync(file, text);
    const tool = toolVerdictInProcess(file, trusted);
    assert.equal(tool.exit, tool.ok ? 0 : 1, `${file}: ${tool.stderr}`);
    if (!samples.has(tool.code ?? 'ok')) samples.set(tool.code ?? 'ok', { file, trusted, stdout: tool.stdout });
    return { file, colony: colonyVerdict(Buffer.from(text), trusted), tool: withoutIo(tool) };
  }

  /** Both verifiers name `expected` (code and the event position or stream id, nothing else). */
  function caught(what: string, tampered: Bundle | string, expected: Verdict, trusted?: string[]): void {
    const v = verdicts(tampered, trusted);
    assert.deepEqual(v.colony, expected, `${what}: colony verify-bundle`);
    assert.deepEqual(v.tool, expected, `${what}: tools/verify-bundle.mjs`);
  }

  const events = (): BundleEvent[] => a.bundle.events;
  const edited = (fn: (x: Bundle) => void): Bundle => {
    const copy = cloneBundle(a.bundle);
    fn(copy);
    return copy;
  };

  it("a changed byte in any event's data: event_hash_mismatch at that event", () => {
    events().forEach((e, i) => {
      const tampered = edited((x) => {
        x.events[i]!.data = changeOneByte(e.data, i * 7);
      });
      caught(`data of event ${e.position}`, tampered, { ok: false, code: 'event_hash_mismatch', position: e.position });
    });
  });

  it("a changed byte in an event's meta, type, recordedAt or prevHash: event_hash_mismatch", () => {
    const e = events()[3]!;
    const cases: [string, (x: BundleEvent) => void][] = [
      [
        'meta',
        (x) => {
          x.meta = { ...x.meta, actor: `${String(x.meta.actor)}x` };
        },
      ],
      [
        'type',
        (x) => {
          x.type = `${x.type}x`;
        },
      ],
      [
        'recordedAt',
        (x) => {
          x.recordedAt = x.recordedAt.replace(/.$/, (c) => (c === 'Z' ? 'z' : 'Z'));
        },
      ],
      [
        'prevHash',
        (x) => {
          x.prevHash = flipHex(x.prevHash);
        },
      ],
    ];
    for (const [field, change] of cases) {
      caught(
        field,
        edited((x) => change(x.events[3]!)),
        { ok: false, code: 'event_hash_mismatch', position: e.position },
      );
    }
  });

  it('an event removed: missing_event at the next event of its stream, or for the stream when it was the last', () => {
    const list = events();
    const middle = list.findIndex((e, i) => list.slice(i + 1).some((f) => f.streamId === e.streamId));
    const next = list.slice(middle + 1).find((f) => f.streamId === list[middle]!.streamId)!;
    caught(
      'a middle event removed',
      edited((x) => x.events.splice(middle, 1)),
      { ok: false, code: 'missing_event', position: next.position },
    );
    const last = list.findIndex(
      (e, i) => i < list.length - 1 && !list.slice(i + 1).some((f) => f.streamId === e.streamId),
    );
    caught(
      'the last event of a stream removed',
      edited((x) => x.events.splice(last, 1)),
      { ok: false, code: 'missing_event', streamId: list[last]!.streamId },
    );
    caught(
      'the very first event removed',
      edited((x) => x.events.shift()),
      {
        ok: false,
        code: 'missing_event',
        ...(list.slice(1).some((f) => f.streamId === list[0]!.streamId)
          ? { position: list.slice(1).find((f) => f.streamId === list[0]!.streamId)!.position }
          : { streamId: list[0]!.streamId }),
      },
    );
  });

  it('an event duplicated: event_out_of_order at the copy', () => {
    const e = events()[5]!;
    caught(
      'a duplicate',
      edited((x) => x.events.splice(6, 0, structuredClone(e))),
      { ok: false, code: 'event_out_of_order', position: e.position },
    );
  });

  it('an event moved: event_out_of_order at the event that now comes after a later one', () => {
    const list = events();
    const i = list.findIndex((e, k) => k > 0 && list[k + 1] !== undefined && list[k + 1]!.streamId !== e.streamId);
    caught(
      'two events swapped',
      edited((x) => {
        [x.events[i], x.events[i + 1]] = [x.events[i + 1]!, x.events[i]!];
      }),
      { ok: false, code: 'event_out_of_order', position: list[i]!.position },
    );
    const last = list.findIndex(
      (e, k) => k < list.length - 1 && !list.slice(k + 1).some((f) => f.streamId === e.streamId),
    );
    caught(
      'an event moved to the end',
      edited((x) => x.events.push(...x.events.splice(last, 1))),
      { ok: false, code: 'event_out_of_order', position: list[last]!.position },
    );
  });

  it("another goal's event slipped in without its stream: foreign_stream at that event", () => {
    const foreign = b.bundle.events.find((e) => e.streamId === `goal-${goalB.goalId}`)!;
    assert.ok(!events().some((e) => e.position === foreign.position));
    const tampered = edited((x) => {
      x.events.push(structuredClone(foreign));
      x.events.sort((p, q) => p.position - q.position);
    });
    caught('a foreign event', tampered, { ok: false, code: 'foreign_stream', position: foreign.position });
  });

  it("another goal's stream slipped in whole, with its signed head and proofs: foreign_stream in both, since the signed manifest does not list it", () => {
    const stream = `goal-${goalB.goalId}`;
    const tampered = edited((x) => {
      x.streams.push(structuredClone(b.bundle.streams.find((s) => s.streamId === stream)!));
      x.streams.sort((p, q) => byUtf8(p.streamId, q.streamId));
      x.events.push(...structuredClone(b.bundle.events.filter((e) => e.streamId === stream)));
      x.events.sort((p, q) => p.position - q.position);
    });
    const v = verdicts(tampered);
    assert.deepEqual(v.tool, { ok: false, code: 'foreign_stream', streamId: stream });
    assert.deepEqual(v.colony, { ok: false, code: 'foreign_stream', streamId: stream });
    const cli = colony(['verify-bundle', v.file, '--json', '--key', publicKey]);
    assert.equal(cli.code, 1, cli.stderr);
    const out = json<{ ok: boolean; failure: Record<string, unknown> }>(cli.stdout);
    assert.equal(out.ok, false);
    assert.deepEqual(keysOf(out.failure), ['code', 'message', 'streamId']);
    assert.equal(out.failure.code, 'foreign_stream');
    assert.equal(out.failure.streamId, stream);
    assert.match(cli.stderr, new RegExp(`for stream ${stream}: foreign_stream`));
    // With goal B's own manifest (signed, of the same checkpoint) in its place: that manifest is about goal B.
    caught(
      "goal B's manifest",
      edited((x) => {
        x.manifest = structuredClone(b.bundle.manifest);
      }),
      { ok: false, code: 'bad_manifest' },
    );
  });

  it('a stream head or a proof edited: bad_head_proof for that stream, bad_inclusion_proof at that event', () => {
    const head = a.bundle.streams[2]!;
    caught(
      "a head's version",
      edited((x) => {
        x.streams[2]!.version += 1;
      }),
      { ok: false, code: 'bad_head_proof', streamId: head.streamId },
    );
    caught(
      "a head's hash",
      edited((x) => {
        x.streams[2]!.hash = flipHex(x.streams[2]!.hash, 5);
      }),
      { ok: false, code: 'bad_head_proof', streamId: head.streamId },
    );
    caught(
      "a head's index",
      edited((x) => {
        x.streams[2]!.index += 1;
      }),
      { ok: false, code: 'bad_head_proof', streamId: head.streamId },
    );
    caught(
      "a head's proof",
      edited((x) => {
        x.streams[2]!.proof[0] = flipHex(x.streams[2]!.proof[0]!, 9);
      }),
      { ok: false, code: 'bad_head_proof', streamId: head.streamId },
    );
    caught(
      "a head's proof cut short",
      edited((x) => {
        x.streams[2]!.proof.pop();
      }),
      { ok: false, code: 'bad_head_proof', streamId: head.streamId },
    );
    const e = events()[4]!;
    caught(
      "an event's proof",
      edited((x) => {
        x.events[4]!.proof[1] = flipHex(x.events[4]!.proof[1]!, 30);
      }),
      { ok: false, code: 'bad_inclusion_proof', position: e.position },
    );
    caught(
      "an event's proof with a hash added",
      edited((x) => {
        x.events[4]!.proof.push(x.events[4]!.proof[0]!);
      }),
      { ok: false, code: 'bad_inclusion_proof', position: e.position },
    );
    caught(
      "the goal's own stream dropped from streams",
      edited((x) => {
        x.streams = x.streams.filter((h) => h.streamId !== `goal-${goalA.goalId}`);
      }),
      { ok: false, code: 'bad_format', streamId: `goal-${goalA.goalId}` },
    );
    caught(
      'streams out of order',
      edited((x) => {
        [x.streams[0], x.streams[1]] = [x.streams[1]!, x.streams[0]!];
      }),
      { ok: false, code: 'bad_format', streamId: a.bundle.streams[0]!.streamId },
    );
  });

  it('an event from after the checkpoint slipped in: beyond_checkpoint at that event', async () => {
    await w.tool(w.owner, 'send_message', {
      channel: 'goal-ship-the-docs',
      body: 'A later message, after the checkpoint.',
    });
    const later = exportGoalBundle(w.f.app.engine, dir, goalA.goalId);
    assert.ok(later.bundle.checkpoint.body.treeSize > a.bundle.checkpoint.body.treeSize);
    const newer = later.bundle.events.at(-1)!;
    assert.ok(newer.position > a.bundle.checkpoint.body.treeSize);
    caught(
      'a later event',
      edited((x) => x.events.push(structuredClone(newer))),
      { ok: false, code: 'beyond_checkpoint', position: newer.position },
    );
  });

  it("the snapshot edited: snapshot_mismatch from Colony's replay (the tool does not check it and passes)", () => {
    const tampered = edited((x) => {
      const snapshot = x.snapshot as { goal: { title: string } };
      assert.equal(snapshot.goal.title, 'Ship the docs');
      snapshot.goal.title = 'Ship the docs, and the blog';
    });
    const v = verdicts(tampered);
    assert.deepEqual(v.tool, { ok: true });
    assert.deepEqual(v.colony, { ok: false, code: 'snapshot_mismatch' });
    const cli = colony(['verify-bundle', v.file, '--json', '--key', publicKey]);
    assert.equal(cli.code, 1, cli.stderr);
    const out = json<{ ok: boolean; failure: { code: string; message: string } }>(cli.stdout);
    assert.deepEqual(keysOf(out.failure), ['code', 'message']);
    assert.equal(out.failure.code, 'snapshot_mismatch');
    assert.match(out.failure.message, /snapshot\.goal\.title/);
  });

  it('the snapshot with a key added or removed: snapshot_mismatch', () => {
    assert.deepEqual(
      colonyVerdict(
        Buffer.from(
          bundleText(
            edited((x) => {
              (x.snapshot as Record<string, unknown>).extra = 1;
            }),
          ),
        ),
        [publicKey],
      ),
      { ok: false, code: 'snapshot_mismatch' },
    );
    assert.deepEqual(
      colonyVerdict(
        Buffer.from(
          bundleText(
            edited((x) => {
              delete (x.snapshot as Record<string, unknown>).recent_events;
            }),
          ),
        ),
        [publicKey],
      ),
      { ok: false, code: 'snapshot_mismatch' },
    );
  });

  it("the checkpoint's signature, tree size, root or time edited: bad_signature", () => {
    const flipSignature = (x: Bundle) => {
      const sig = Buffer.from(x.checkpoint.signature, 'base64');
      sig[10]! ^= 0x01;
      x.checkpoint.signature = sig.toString('base64');
    };
    caught('signature', edited(flipSignature), { ok: false, code: 'bad_signature' });
    caught(
      'treeSize - 1',
      edited((x) => {
        x.checkpoint.body.treeSize -= 1;
      }),
      { ok: false, code: 'bad_signature' },
    );
    caught(
      'treeSize + 1',
      edited((x) => {
        x.checkpoint.body.treeSize += 1;
      }),
      { ok: false, code: 'bad_signature' },
    );
    caught(
      'rootHash',
      edited((x) => {
        x.checkpoint.body.rootHash = flipHex(x.checkpoint.body.rootHash);
      }),
      { ok: false, code: 'bad_signature' },
    );
    caught(
      'heads.root',
      edited((x) => {
        x.checkpoint.body.heads.root = flipHex(x.checkpoint.body.heads.root, 63);
      }),
      { ok: false, code: 'bad_signature' },
    );
    caught(
      'time',
      edited((x) => {
        x.checkpoint.body.time = x.checkpoint.body.time.replace('Z', '+00:00');
      }),
      { ok: false, code: 'bad_signature' },
    );
  });

  it('a bundle re-signed by another key: untrusted_key against the real key; bad_key when keyId and publicKey disagree', () => {
    const other = nacl.sign.keyPair();
    const otherText = Buffer.from(other.publicKey).toString('base64');
    const resigned = edited((x) => {
      // the same statements, signed by a key of the attacker's
      x.checkpoint.body.keyId = fingerprint(other.publicKey);
      x.checkpoint.signature = Buffer.from(
        nacl.sign.detached(Buffer.from(canonicalize(x.checkpoint.body), 'utf8'), other.secretKey),
      ).toString('base64');
      x.manifest.signature = Buffer.from(
        nacl.sign.detached(Buffer.from(canonicalize(x.manifest.body), 'utf8'), other.secretKey),
      ).toString('base64');
      x.publicKey = otherText;
    });
    caught('signed by another key', resigned, { ok: false, code: 'untrusted_key' });
    caught('signed by another key, checked by fingerprint', resigned, { ok: false, code: 'untrusted_key' }, [
      a.bundle.checkpoint.body.keyId,
    ]);
    // Self-consistent: only the trusted key tells it apart.
    const self = verdicts(resigned, [otherText]);
    assert.deepEqual([self.colony, self.tool], [{ ok: true }, { ok: true }]);
    caught(
      'publicKey swapped, keyId kept',
      edited((x) => {
        x.publicKey = otherText;
      }),
      { ok: false, code: 'bad_key' },
    );
  });

  it('not canonical (pretty-printed, no final LF, CRLF, a BOM, keys reordered): bad_format', () => {
    caught('pretty-printed', `${JSON.stringify(a.bundle, null, 2)}\n`, { ok: false, code: 'bad_format' });
    caught('no final LF', a.text.slice(0, -1), { ok: false, code: 'bad_format' });
    caught('CRLF', `${a.text.slice(0, -1)}\r\n`, { ok: false, code: 'bad_format' });
    caught('BOM', `\uFEFF${a.text}`, { ok: false, code: 'bad_format' });
    const { format, ...rest } = a.bundle;
    caught('keys reordered', `${JSON.stringify({ ...rest, format }).replace(/\s/g, '')}\n`, {
      ok: false,
      code: 'bad_format',
    });
    caught(
      'an unknown key',
      edited((x) => {
        (x as unknown as Record<string, unknown>).note = 'hi';
      }),
      { ok: false, code: 'bad_format' },
    );
  });

  it('the tool run as its own process prints the same JSON and exit code as its code run in-process, for every verdict above', () => {
    assert.deepEqual([...samples.keys()].sort(), [
      'bad_format',
      'bad_head_proof',
      'bad_inclusion_proof',
      'bad_key',
      'bad_manifest',
      'bad_signature',
      'beyond_checkpoint',
      'event_hash_mismatch',
      'event_out_of_order',
      'foreign_stream',
      'missing_event',
      'ok',
      'untrusted_key',
    ]);
    for (const [code, { file, trusted, stdout }] of samples) {
      const spawned = toolVerdict(file, trusted);
      assert.equal(spawned.stdout, stdout, code);
      assert.equal(spawned.exit, code === 'ok' ? 0 : 1, code);
    }
  });
});

describe('an object with a "toJSON" key is stored RFC 8785 canonical', () => {
  // json-canonicalize serializes any object with a non-null `toJSON` property with plain JSON.stringify
  // (keys unsorted); message metadata is any JSON object an agent sends. src/canonical.ts sorts it like any
  // other object, so the stored hash is the one every RFC 8785 implementation computes, and both verifiers agree.
  it('a message with metadata {"toJSON":1,"b":2,"a":1}: both verifiers accept the bundle', async () => {
    await w.tool(w.owner, 'send_message', {
      channel: 'goal-fix-the-build',
      body: 'Metadata with a toJSON key.',
      metadata: '{"toJSON":1,"b":2,"a":1}',
    });
    const { text } = exportGoalBundle(w.f.app.engine, dir, goalB.goalId);
    const file = join(scratch.dir, 'tojson.bundle.json');
    writeFileSync(file, text);
    assert.ok(text.includes('"metadata":{"a":1,"b":2,"toJSON":1}'), 'the bundle carries the keys sorted');
    assert.deepEqual(colonyVerdict(Buffer.from(text)), { ok: true }, 'Colony accepts it');
    assert.deepEqual(withoutIo(toolVerdictInProcess(file)), { ok: true }, 'the independent tool accepts it');
  });
});

/** Changes one byte of the canonical JSON of `data` (a digit or a letter's case), keeping it valid JSON. */
function changeOneByte(data: unknown, from: number): unknown {
  const text = canonicalize(data);
  for (let k = 0; k < text.length; k++) {
    const i = (from + k) % text.length;
    const c = text[i]!;
    const swapped = /[0-8]/.test(c)
      ? String(Number(c) + 1)
      : c === '9'
        ? '8'
        : /[a-z]/.test(c)
          ? c.toUpperCase()
          : /[A-Z]/.test(c)
            ? c.toLowerCase()
            : null;
    if (swapped === null) continue;
    try {
      const parsed = JSON.parse(text.slice(0, i) + swapped + text.slice(i + 1)) as unknown;
      if (canonicalize(parsed) !== text) return parsed;
    } catch {
      // not JSON any more (true → True, a leading zero): try the next byte
    }
  }
  throw new Error(`no byte of ${text} could be changed`);
}

/** Flips the lowest bit of one hex digit: still 64 lowercase hex digits, one byte different. */
const flipHex = (h: string, i = 0): string => h.slice(0, i) + (parseInt(h[i]!, 16) ^ 1).toString(16) + h.slice(i + 1);

// ------------------------------------------------------------------------------------------ 3: --since

describe("verify --since catches a chain rewritten and fully re-hashed behind Colony's back", () => {
  const data = join(scratch.dir, 'since');
  const cpFile = join(scratch.dir, 'since-checkpoint.json');
  let signedSize = 0;

  before(() => {
    mkdirSync(data);
    const app = openApp({ dataDir: data, durability: 'normal' });
    try {
      const owner = createOwner(app, 'owner', { actor: 'system' });
      const by = { key: `user-${owner.userId}`, name: 'owner', tenant: owner.userId };
      const goal = createGoal(
        app,
        by,
        {
          title: 'Before the checkpoint',
          description: 'A goal the auditor saw signed.',
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 3,
          coordinatorConfig: 'default',
          approvalMode: 'human',
        },
        { actor: 'user:owner' },
      );
      sendToChannel(
        app,
        by,
        { id: goal.channelId },
        { body: 'First words.', subject: null, priority: 5, metadata: null, replyTo: null },
        { actor: 'user:owner' },
      );
    } finally {
      app.engine.close();
    }
  });

  it('on the untouched log, after more appends, it passes with a non-empty consistency proof', () => {
    const cp = colony(['checkpoint', '--json', '--data', data]);
    assert.equal(cp.code, 0, cp.stderr);
    writeFileSync(cpFile, cp.stdout);
    const signed = json<{ checkpoint: { body: { treeSize: number; rootHash: string } }; publicKey: string }>(cp.stdout);
    signedSize = signed.checkpoint.body.treeSize;
    const more = colony([
      'goals',
      'create',
      '--title',
      'After the checkpoint',
      '--description',
      'A goal made after the auditor kept the checkpoint.',
      '--data',
      data,
    ]);
    assert.equal(more.code, 0, more.stderr);
    const since = colony(['verify', '--since', cpFile, '--json', '--data', data]);
    assert.equal(since.code, 0, since.stderr);
    const r = json<{
      ok: boolean;
      from: number;
      to: number;
      root: string;
      consistency: string[];
      chain: { ok: boolean; head: { position: number } };
    }>(since.stdout);
    assert.equal(r.ok, true);
    assert.equal(r.from, signedSize);
    assert.ok(r.to > r.from, `the log grew: ${r.from} → ${r.to}`);
    assert.equal(r.chain.head.position, r.to);
    assert.ok(r.consistency.length > 0, 'a consistency proof');
    assert.ok(r.consistency.every((h) => /^[0-9a-f]{64}$/.test(h)));
    assert.match(r.root, /^[0-9a-f]{64}$/);
  });

  it('an early event edited and every hash after it recomputed: plain verify passes, verify --since fails with not_extended', () => {
    assert.ok(signedSize > 0, 'the checkpoint was taken');
    const db = new Database(join(data, 'colony.db'), { readonly: true });
    const position = db
      .prepare("SELECT position FROM es_events WHERE type = 'GoalCreated' ORDER BY position LIMIT 1")
      .pluck()
      .get() as number;
    db.close();
    assert.ok(position >= 2 && position <= signedSize, `event ${position} is inside the checkpoint`);
    const last = rewriteLog(data, position, (d) => {
      assert.equal(d.title, 'Before the checkpoint');
      return { ...d, title: 'Rewritten afterwards' };
    });

    // Without --since (and with the start-up anchor gone) nothing notices: that is why --since exists.
    const plain = colony(['verify', '--json', '--data', data]);
    assert.equal(plain.code, 0, `plain verify passes the re-hashed chain: ${plain.stderr}`);
    const p = json<{ ok: boolean; head: { hash: string } }>(plain.stdout);
    assert.equal(p.ok, true);
    assert.equal(p.head.hash, last);

    const since = colony(['verify', '--since', cpFile, '--json', '--data', data]);
    assert.equal(since.code, 1, since.stdout);
    const r = json<{ ok: boolean; reason: string; message: string }>(since.stdout);
    assert.equal(r.ok, false);
    assert.equal(r.reason, 'not_extended');
    assert.match(
      r.message,
      new RegExp(
        `not the signed ${json<{ checkpoint: { body: { rootHash: string } } }>(readFileSync(cpFile, 'utf8')).checkpoint.body.rootHash}`,
      ),
    );
    assert.match(since.stderr, /verify --since failed: not_extended/);
  });

  it('the first event edited and re-hashed as well: --since says other_log (checked in-process: verifySince is what the command runs)', () => {
    rewriteLog(data, 1, (d) => ({ ...d, name: 'someone-else' }));
    const db = new Database(join(data, 'colony.db'), { readonly: true });
    try {
      const r = verifySince(db, json<SignedCheckpoint>(readFileSync(cpFile, 'utf8')));
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.reason, 'other_log');
    } finally {
      db.close();
    }
  });
});

// ------------------------------------------------------------------------------------------ 4: property

describe('property: random small logs export to bundles that verify, and any one changed byte fails', () => {
  interface GoalPlan {
    tasks: number;
    messages: number;
    auto: boolean;
  }
  const plan = fc.record({
    goals: fc.array(
      fc.record({
        tasks: fc.integer({ min: 0, max: 3 }),
        messages: fc.integer({ min: 0, max: 3 }),
        auto: fc.boolean(),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    pick: fc.nat(),
    changes: fc.array(fc.record({ at: fc.nat(), delta: fc.integer({ min: 1, max: 255 }) }), {
      minLength: 1,
      maxLength: 8,
    }),
  });

  /** A fresh data dir with `goals` made through the actions the tools use; returns the bundle of one of them. */
  function exportRandom(goals: GoalPlan[], pick: number): string {
    const data = mkdtempSync(join(scratch.dir, 'prop-'));
    const app = openApp({ dataDir: data, durability: 'normal', clock: fixedClock('2026-04-01T00:00:00.000Z', 1000) });
    try {
      const owner = createOwner(app, 'owner', { actor: 'system' });
      const by = { key: `user-${owner.userId}`, name: 'owner', tenant: owner.userId };
      const ids = goals.map((g, i) => {
        const goal = createGoal(
          app,
          by,
          {
            title: `Goal number ${i}`,
            description: `The goal number ${i}, done well.`,
            budgets: { tokens: null, cents: 5000 },
            maxSpawnDepth: 3,
            coordinatorConfig: 'default',
            approvalMode: g.auto ? 'auto' : 'human',
          },
          { actor: 'user:owner' },
        );
        if (g.tasks > 0) {
          proposeTaskTree(
            app,
            by,
            goal.goalId,
            'Split it.',
            {
              title: `Root of ${i}`,
              description: 'The whole of the work.',
              children: Array.from({ length: g.tasks - 1 }, (_, k) => ({
                title: `Step ${k}`,
                description: `Step ${k} of the work.`,
              })),
            },
            { actor: 'user:owner' },
          );
        }
        for (let m = 0; m < g.messages; m++) {
          sendToChannel(
            app,
            by,
            { id: goal.channelId },
            { body: `Message ${m} — ü "x"`, subject: null, priority: 5, metadata: null, replyTo: null },
            { actor: 'user:owner' },
          );
        }
        return goal.goalId;
      });
      return exportGoalBundle(app.engine, data, ids[pick % ids.length]!).text;
    } finally {
      app.engine.close();
      rmSync(data, { recursive: true, force: true });
    }
  }

  it('holds for 15 random logs and up to 8 random byte changes each', () => {
    fc.assert(
      fc.property(plan, ({ goals, pick, changes }) => {
        const text = exportRandom(goals, pick);
        const bytes = Buffer.from(text);
        assert.deepEqual(colonyVerdict(bytes), { ok: true }, 'the exported bundle verifies and replays');
        for (const { at, delta } of changes) {
          const changed = Buffer.from(bytes);
          const i = at % changed.length;
          changed[i] = (changed[i]! + delta) % 256;
          const v = colonyVerdict(changed);
          assert.equal(
            v.ok,
            false,
            `byte ${i} changed from ${bytes[i]} to ${changed[i]} and the bundle still verifies`,
          );
        }
      }),
      { numRuns: 15 },
    );
  });
});

describe("property: on any single changed byte, Colony's checks 1–7 and the independent tool give the same verdict", () => {
  it('holds for 200 random byte changes of the golden bundle', () => {
    const original = readFileSync(join(FIXTURE_DIR, 'goal-1.bundle.json'));
    const file = join(scratch.dir, 'one-byte.json');
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 255 }), (at, delta) => {
        const changed = Buffer.from(original);
        const i = at % changed.length;
        changed[i] = (changed[i]! + delta) % 256;
        writeFileSync(file, changed);
        assert.deepEqual(
          withoutIo(toolVerdictInProcess(file)),
          staticVerdict(changed),
          `byte ${i}: ${original[i]} → ${changed[i]}`,
        );
      }),
      { numRuns: 200 },
    );
  });
});

// ------------------------------------------------------------------------------------------ 5: golden

describe('golden fixtures pin the hashing and the format', () => {
  const sha = (...parts: Uint8Array[]): Buffer => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
  /** RFC 9162 MTH from its definition, independent of src/engine/merkle.ts. */
  const mth = (leaves: Buffer[]): Buffer => {
    if (leaves.length === 1) return leaves[0]!;
    let k = 1;
    while (k * 2 < leaves.length) k *= 2;
    return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
  };

  it('merkle-vectors.json: the leaves and roots of five fixed event hashes', () => {
    const pinned = json<ReturnType<typeof merkleVectors>>(
      readFileSync(join(FIXTURE_DIR, 'merkle-vectors.json'), 'utf8'),
    );
    assert.deepEqual(merkleVectors(), pinned, 'src/engine/merkle.ts computes the pinned vectors');
    const leaves = pinned.eventHashes.map((h) => sha(Buffer.from([0]), Buffer.from(h, 'hex')));
    assert.deepEqual(
      leaves.map((l) => l.toString('hex')),
      pinned.leaves,
      'leaf = SHA-256(0x00 || event hash)',
    );
    for (let size = 1; size <= 5; size++)
      assert.equal(mth(leaves.slice(0, size)).toString('hex'), pinned.roots[String(size)], `root of ${size}`);
  });

  it('goal-1.bundle.json regenerates byte for byte (fixed clock, key and command ids)', () => {
    const pinned = readFileSync(join(FIXTURE_DIR, 'goal-1.bundle.json'));
    const data = mkdtempSync(join(scratch.dir, 'golden-'));
    assert.equal(goldenBundleText(data), pinned.toString('utf8'));
  });

  it("both verifiers accept the pinned bundle, with its key trusted, and it has exactly the spec's keys", () => {
    const file = join(FIXTURE_DIR, 'goal-1.bundle.json');
    const bytes = readFileSync(file);
    const key = publicKeyText(keyFromSeed(GOLDEN_SEED));
    assert.deepEqual(colonyVerdict(bytes, [key]), { ok: true });
    assert.deepEqual(withoutIo(toolVerdict(file, [key])), { ok: true });
    const human = spawnSync(process.execPath, [VERIFY_TOOL, file, '--key', key], { encoding: 'utf8' });
    assert.equal(human.status, 0, human.stderr);

    const b = parseBundle(bytes);
    assert.equal(bytes.toString('utf8'), bundleText(b), 'canonical JSON and exactly one LF');
    assert.deepEqual(keysOf(b), [
      'checkpoint',
      'events',
      'format',
      'goalId',
      'manifest',
      'publicKey',
      'snapshot',
      'streams',
      'version',
    ]);
    assert.equal(b.format, 'colony-goal-bundle');
    assert.equal(b.version, 2);
    assert.equal(b.publicKey, key);
    assert.deepEqual(keysOf(b.checkpoint), ['body', 'signature']);
    assert.deepEqual(keysOf(b.checkpoint.body), [
      'format',
      'heads',
      'keyId',
      'logId',
      'rootHash',
      'time',
      'treeSize',
      'version',
    ]);
    assert.deepEqual(keysOf(b.checkpoint.body.heads), ['count', 'root']);
    assert.equal(b.checkpoint.body.format, 'colony-checkpoint');
    assert.equal(b.checkpoint.body.keyId, fingerprint(Buffer.from(key, 'base64')));
    assert.equal(b.events[0]!.position, 2, 'the golden log begins with the key adoption, outside the goal');
    assert.equal(b.checkpoint.body.logId, b.events[0]!.prevHash, "logId is the hash of the log's first event");
    assert.equal(Buffer.from(b.checkpoint.signature, 'base64').length, 64);
    for (const s of b.streams) assert.deepEqual(keysOf(s), ['hash', 'index', 'proof', 'streamId', 'version']);
    for (const e of b.events) {
      assert.deepEqual(keysOf(e), [
        'data',
        'hash',
        'meta',
        'position',
        'prevHash',
        'proof',
        'recordedAt',
        'schemaVersion',
        'streamId',
        'type',
        'version',
      ]);
      assert.ok(e.proof.every((h) => /^[0-9a-f]{64}$/.test(h)));
    }
    assert.deepEqual(
      b.streams.map((s) => s.streamId),
      [...b.streams.map((s) => s.streamId)].sort(byUtf8),
    );
    assert.ok(b.streams.some((s) => s.streamId === `goal-${b.goalId}`));
    assert.deepEqual(keysOf(b.manifest), ['body', 'signature']);
    assert.deepEqual(keysOf(b.manifest.body), [
      'format',
      'goalId',
      'logId',
      'rootHash',
      'streams',
      'treeSize',
      'version',
      'withheld',
    ]);
    assert.equal(b.manifest.body.format, 'colony-goal-manifest');
    assert.equal(b.manifest.body.version, 1);
    for (const k of ['logId', 'treeSize', 'rootHash'] as const) assert.equal(b.manifest.body[k], b.checkpoint.body[k]);
    assert.deepEqual(
      b.manifest.body.streams,
      b.streams.map((s) => s.streamId),
    );
    // The golden goal's proposal names #approvals (channel-2), which carries every goal's proposals.
    assert.deepEqual(
      b.manifest.body.withheld.map((w) => w.streamId),
      ['channel-2'],
    );
    for (const w of b.manifest.body.withheld) assert.deepEqual(keysOf(w), ['reason', 'streamId']);
    assert.deepEqual(keysOf(b.snapshot as object), [
      'cost_breakdown',
      'goal',
      'recent_events',
      'spawned_agents',
      'tasks_tree',
    ]);
  });
});
