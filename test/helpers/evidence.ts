import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { canonicalize } from '../../src/canonical.js';
import { createGoal } from '../../src/actions/goals.js';
import { decideProposal, proposeTaskTree } from '../../src/actions/proposals.js';
import { sendToChannel } from '../../src/actions/channels.js';
import { openApp } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { principalDecider } from '../../src/commands/principals.js';
import { signingKeysDecider } from '../../src/commands/signing-keys.js';
import { EVENT_COLUMNS, type EventRow } from '../../src/engine/event.js';
import { GENESIS_HASH, rowHash } from '../../src/engine/hash.js';
import { leafHash, rootOfLeaves } from '../../src/engine/merkle.js';
import { agentStream, userStream } from '../../src/events/principals.js';
import { SIGNING_KEYS_STREAM } from '../../src/events/signing-keys.js';
import type { Bundle } from '../../src/evidence/bundle.js';
import { exportGoalBundle } from '../../src/evidence/bundle-export.js';
import { replayBundle } from '../../src/evidence/bundle-replay.js';
import { checkBundle } from '../../src/evidence/bundle-verify.js';
import { keyFromSeed, publicKeyText, SIGNING_KEY_FILE } from '../../src/signing-key.js';

/**
 * Helpers for the evidence tests: bundles as text, the verdicts of Colony's verifier and of the
 * independent tools/verify-bundle.mjs, a log rewritten behind Colony's back, and the deterministic inputs of
 * the golden fixtures under fixtures/bundle/ (fixtures/bundle/generate.ts writes them from here).
 */
export const VERIFY_TOOL = fileURLToPath(new URL('../../tools/verify-bundle.mjs', import.meta.url));
export const FIXTURE_DIR = fileURLToPath(new URL('../../fixtures/bundle/', import.meta.url));

/** The bundle file format: RFC 8785 canonical JSON and one LF. */
export const bundleText = (bundle: unknown): string => `${canonicalize(bundle)}\n`;
export const parseBundle = (text: string | Buffer): Bundle => JSON.parse(text.toString()) as Bundle;
export const cloneBundle = (bundle: Bundle): Bundle => structuredClone(bundle);

/** A verifier's answer, reduced to what both verifiers must agree on. */
export interface Verdict {
  ok: boolean;
  code?: string;
  position?: number;
  streamId?: string;
}

const verdictOf = (failure: { code: string; position?: number; streamId?: string } | null): Verdict =>
  failure === null
    ? { ok: true }
    : {
        ok: false,
        code: failure.code,
        ...(failure.position !== undefined ? { position: failure.position } : {}),
        ...(failure.streamId !== undefined ? { streamId: failure.streamId } : {}),
      };

/** Checks 1–7 of Colony's verifier (src/evidence/bundle-verify.ts). */
export function staticVerdict(bytes: Buffer, trusted: readonly string[] | null = null): Verdict {
  const checked = checkBundle(bytes, trusted);
  return verdictOf(checked.ok ? null : checked.failure);
}

/** What `colony verify-bundle` decides: checks 1–7, then the replay (check 8). */
export function colonyVerdict(bytes: Buffer, trusted: readonly string[] | null = null): Verdict {
  const checked = checkBundle(bytes, trusted);
  return verdictOf(checked.ok ? replayBundle(checked.bundle) : checked.failure);
}

type ToolRun = Verdict & { exit: number | null; stdout: string; stderr: string };

const toolRun = (exit: number | null, stdout: string, stderr: string): ToolRun => {
  if (exit === 2) return { ok: false, code: 'usage', exit, stdout, stderr }; // the tool's usage error: no JSON
  const out = JSON.parse(stdout) as { ok: boolean; failure?: { code: string; position?: number; streamId?: string } };
  return { ...verdictOf(out.ok ? null : out.failure!), exit, stdout, stderr };
};

/** tools/verify-bundle.mjs run as auditors run it, as its own process: `node tools/verify-bundle.mjs FILE --json [--key K]…`. */
export function toolVerdict(file: string, keys: readonly string[] = []): ToolRun {
  const r = spawnSync(process.execPath, [VERIFY_TOOL, file, '--json', ...keys.flatMap((k) => ['--key', k])], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return toolRun(r.status, r.stdout, r.stderr);
}

/**
 * The same tool's code loaded into this process — its text unchanged except the last line, which runs
 * `main` on process.argv, becomes an export of `main` — so dozens of tampered files cost no process each.
 * `main` gets the same argv and its stdout/stderr are captured; the tests also run a sample as processes.
 */
const TOOL_LAST_LINE = 'process.exitCode = main(process.argv.slice(2));';
const toolSource = readFileSync(VERIFY_TOOL, 'utf8').trimEnd();
if (!toolSource.endsWith(TOOL_LAST_LINE))
  throw new Error(`${VERIFY_TOOL} no longer ends with "${TOOL_LAST_LINE}": update test/helpers/evidence.ts`);
const toolModule = `${toolSource.slice(0, -TOOL_LAST_LINE.length)}export { main, REFERENCES };\n`;
const { main: toolMain, REFERENCES: toolReferences } = (await import(
  `data:text/javascript;base64,${Buffer.from(toolModule).toString('base64')}`
)) as { main: (argv: string[]) => number; REFERENCES: Record<string, Record<string, string>> };

/** The tool's table of the streams an event names (its REFERENCES), for comparison with src/evidence/bundle-refs.ts. */
export const TOOL_REFERENCES = toolReferences;

export function toolVerdictInProcess(file: string, keys: readonly string[] = []): ToolRun {
  const out: string[] = [];
  const err: string[] = [];
  const { stdout, stderr } = process;
  const writeOut = stdout.write;
  const writeErr = stderr.write;
  stdout.write = ((chunk: string | Uint8Array) => out.push(String(chunk)) > 0) as typeof stdout.write;
  stderr.write = ((chunk: string | Uint8Array) => err.push(String(chunk)) > 0) as typeof stderr.write;
  let exit: number;
  try {
    exit = toolMain([file, '--json', ...keys.flatMap((k) => ['--key', k])]);
  } finally {
    stdout.write = writeOut;
    stderr.write = writeErr;
  }
  return toolRun(exit, out.join(''), err.join(''));
}

/**
 * Rewrites the log behind Colony's back, the way an attacker with the database file would: drops the
 * append-only trigger, edits the data of the event at `position`, recomputes every prev_hash and hash from
 * there to the end (so the chain holds again), moves the `$log` anchor's hash to the new last hash and
 * deletes chain-anchor.json. Returns the new last hash.
 */
export function rewriteLog(
  dataDir: string,
  position: number,
  edit: (data: Record<string, unknown>) => Record<string, unknown>,
): string {
  const db = new Database(join(dataDir, 'colony.db'));
  try {
    return db.transaction(() => {
      db.exec('DROP TRIGGER IF EXISTS es_events_no_update');
      const rows = db
        .prepare(`SELECT ${EVENT_COLUMNS} FROM es_events WHERE position >= ? ORDER BY position`)
        .all(position) as EventRow[];
      let prev =
        position === 1
          ? GENESIS_HASH
          : (db
              .prepare('SELECT hash FROM es_events WHERE position = ?')
              .pluck()
              .get(position - 1) as string);
      const update = db.prepare('UPDATE es_events SET data = ?, prev_hash = ?, hash = ? WHERE position = ?');
      for (const row of rows) {
        const data =
          row.position === position ? canonicalize(edit(JSON.parse(row.data) as Record<string, unknown>)) : row.data;
        const hash = rowHash({ ...row, data, prev_hash: prev });
        update.run(data, prev, hash, row.position);
        prev = hash;
      }
      db.prepare("UPDATE es_projections SET hash = ? WHERE name = '$log'").run(prev);
      return prev;
    })();
  } finally {
    db.close();
    rmSync(join(dataDir, 'chain-anchor.json'), { force: true });
  }
}

// ------------------------------------------------------------------------------------------ golden inputs

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Five fixed 32-byte event hashes and, computed by src/engine/merkle.ts, their leaves and the roots of sizes 1..5. */
export interface MerkleVectors {
  description: string;
  eventHashes: string[];
  leaves: string[];
  roots: Record<string, string>;
}

export function merkleVectors(): MerkleVectors {
  const eventHashes = [1, 2, 3, 4, 5].map((i) => sha256(`colony golden event ${i}`).toString('hex'));
  const leaves = eventHashes.map((h) => leafHash(Buffer.from(h, 'hex')));
  const roots = Object.fromEntries(
    [1, 2, 3, 4, 5].map((n) => [String(n), rootOfLeaves(leaves.slice(0, n)).toString('hex')]),
  );
  return {
    description:
      'RFC 9162 log-tree vectors for event-hash leaves: leaf = SHA-256(0x00 || 32-byte event hash), node = SHA-256(0x01 || left || right); roots[n] is the root of the first n leaves',
    eventHashes,
    leaves: leaves.map((l) => l.toString('hex')),
    roots,
  };
}

/** The golden bundle's inputs: the signing key's seed, the clock, and the command ids are all fixed. */
export const GOLDEN_SEED = sha256('colony golden bundle signing key');
export const GOLDEN_START = '2026-02-01T08:00:00.000Z';

/**
 * Builds the golden goal on a fresh data dir and returns its bundle's text. Every command carries a fixed
 * command id and the clock ticks 1 s per reading, so the log is the same byte for byte on every run. The
 * owner and the coordinator are made with their principal commands directly (no token: a token is random
 * and its hash would be in the owner's and the agent's streams); everything else goes through the actions
 * the tools use: create_goal, propose_task_tree, the owner's approval, a message in the goal's channel.
 */
export function goldenBundleText(dataDir: string): string {
  writeFileSync(join(dataDir, SIGNING_KEY_FILE), GOLDEN_SEED, { mode: 0o600 });
  const app = openApp({ dataDir, durability: 'normal', clock: fixedClock(GOLDEN_START, 1000) });
  try {
    const { engine } = app;
    let n = 0;
    const as = (actor: string) => ({ actor, commandId: `golden-${String(++n).padStart(2, '0')}` });
    const key = keyFromSeed(GOLDEN_SEED);
    engine.handle(
      signingKeysDecider,
      SIGNING_KEYS_STREAM,
      { type: 'AdoptSigningKey', keyId: key.keyId, publicKey: publicKeyText(key), by: 'init' },
      as('system'),
    );
    const system = as('system');
    const ownerId = engine.transact(system, (uow) => {
      const userId = uow.ids.next('user');
      engine.handle(
        principalDecider,
        userStream(userId),
        { type: 'CreateUser', userId, name: 'owner', nameTaken: false },
        system,
      );
      return userId;
    }).value!;
    const byOwner = as('user:owner');
    engine.transact(byOwner, (uow) => {
      const agentId = uow.ids.next('agent');
      engine.handle(
        principalDecider,
        agentStream(agentId),
        {
          type: 'RegisterAgent',
          agent: {
            agentId,
            name: 'lead',
            ownerId,
            model: 'test-model',
            systemPrompt: 'You lead the golden goal to its end.',
            toolScope: ['get_goal', 'propose_task_tree'],
            tier: 'assisted',
            command: null,
            parentId: null,
            spawnDepth: 0,
          },
          names: { ownerName: 'owner', taken: false },
        },
        byOwner,
      );
    });
    const owner = { key: `user-${ownerId}`, name: 'owner', tenant: ownerId };
    const goal = createGoal(
      app,
      owner,
      {
        title: 'Golden goal',
        description: 'A goal whose bundle is pinned byte for byte.',
        budgets: { tokens: null, cents: 1000 },
        maxSpawnDepth: 1,
        coordinatorConfig: 'lead',
        approvalMode: 'human',
      },
      as('user:owner'),
    );
    const proposed = proposeTaskTree(
      app,
      owner,
      goal.goalId,
      'Two steps are enough.',
      {
        title: 'Root task',
        description: 'The whole of the golden work.',
        children: [{ title: 'First step', description: 'The first part of the golden work.' }],
      },
      as('user:owner'),
    );
    decideProposal(app, owner, proposed.proposalId, 'approve', '', as('user:owner'));
    sendToChannel(
      app,
      owner,
      { id: goal.channelId },
      {
        body: 'Kick-off: "quoted", non-ASCII é ü 😀, a tab\tand a newline\n.',
        subject: null,
        priority: 5,
        metadata: null,
        replyTo: null,
      },
      as('user:owner'),
    );
    return exportGoalBundle(engine, dataDir, goal.goalId).text;
  } finally {
    app.engine.close();
  }
}
