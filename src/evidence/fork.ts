import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { rotateToken } from '../actions/principals.js';
import { openApp, type App } from '../app.js';
import type { Clock } from '../clock.js';
import { prepared } from '../engine/db.js';
import { forkRows } from '../engine/fork-log.js';
import { newCommandId } from '../engine/ids.js';
import { readHead } from '../engine/store.js';
import { DomainError } from '../errors.js';
import { FORK_STREAM, type LogForked } from '../events/forks.js';
import { adoptSigningKey } from './keys.js';
import { planFork, type ForkPlan } from './fork-plan.js';

/**
 * `colony fork` and the console's "Fork from here": a new data dir whose log is a goal's history up to a
 * position of this one (fork-plan.ts says what), re-chained after an origin event that names where it came
 * from (events/forks.ts). The origin log is only read. The fork gets its own master key, signing key and
 * tokens — a new one per copied agent, sealed so Colony can start it, and one for the owner when asked —
 * and its projections are built from its log as it is imported. A wrong input writes nothing; a failure
 * half-way removes what was written.
 */
export interface ForkRequest {
  goalId: number;
  position: number;
  /** The new data dir: absent, or an empty directory. */
  target: string;
  originDataDir: string;
  /** Who forks (the meta of the fork's own events); default: the goal's owner, `user:<name>`. */
  actor?: string;
  /** Only this owner's goals (REST: the caller's tenant); null: any (the CLI, which reads the files). */
  tenant?: number | null;
  ownerToken: boolean;
  clock?: Clock;
}

export interface ForkResult {
  dataDir: string;
  goalId: number;
  position: number;
  origin: ForkPlan['origin'];
  /** Events copied from the origin (the fork's log is these, after its origin event, then its new tokens). */
  copied: number;
  streams: string[];
  secretsNotCopied: ForkPlan['secretsNotCopied'];
  head: { position: number; hash: string };
  ownerName: string;
  ownerToken: string | null;
}

export function forkGoal(source: Database, req: ForkRequest): ForkResult {
  const exists = checkTarget(req.target);
  const plan = planFork(source, req.goalId, req.position, req.tenant ?? null);
  if (!exists) mkdirSync(req.target, { recursive: true, mode: 0o700 });
  try {
    return writeFork(plan, req);
  } catch (e) {
    if (!exists) rmSync(req.target, { recursive: true, force: true });
    else for (const entry of readdirSync(req.target)) rmSync(join(req.target, entry), { recursive: true, force: true });
    throw e;
  }
}

/** The target must not hold anything (checked before anything is read or written): whether it exists, empty. */
function checkTarget(target: string): boolean {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    return false;
  }
  if (!stat.isDirectory() || readdirSync(target).length > 0)
    throw new DomainError(
      'ErrInvalidInput',
      `${target} already exists and is not an empty directory: choose a new one`,
      {
        field: 'data',
      },
    );
  return true;
}

function writeFork(plan: ForkPlan, req: ForkRequest): ForkResult {
  const app = openApp({ dataDir: req.target, durability: 'full', clock: req.clock });
  try {
    const actor = req.actor ?? `user:${plan.ownerName}`;
    const by = { actor };
    const data: LogForked['data'] = {
      goalId: plan.goalId,
      origin: { ...plan.origin, dataDir: req.originDataDir },
      streams: plan.streams,
      events: plan.rows.length,
      secretsNotCopied: plan.secretsNotCopied,
      by: actor,
    };
    const meta = { commandId: newCommandId(), actor, causationId: null, correlationId: null };
    const at = app.engine.clock().toISOString();
    app.engine.importRows(
      forkRows({ streamId: FORK_STREAM, type: 'LogForked', data, meta, recordedAt: at }, plan.rows),
    );
    raiseSequences(app, plan.sequences);
    adoptSigningKey(app.engine, req.target);
    for (const agentId of plan.agentIds) rotateToken(app, 'agent', agentId, by);
    const ownerToken = req.ownerToken ? rotateToken(app, 'user', plan.ownerId, by) : null;
    const check = app.engine.verify();
    if (!check.ok) throw new Error(`the fork's log does not verify at position ${check.position}: ${check.message}`);
    return {
      dataDir: req.target,
      goalId: plan.goalId,
      position: plan.position,
      origin: plan.origin,
      copied: plan.rows.length,
      streams: plan.streams,
      secretsNotCopied: plan.secretsNotCopied,
      head: readHead(app.engine.db),
      ownerName: plan.ownerName,
      ownerToken,
    };
  } finally {
    app.engine.close();
  }
}

/** Ids of the fork never collide with the origin's: every kind continues after the origin's high-water mark. */
function raiseSequences(app: App, marks: ReadonlyMap<string, number>): void {
  const upsert = prepared(
    app.engine.db,
    'INSERT INTO es_sequences (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = MAX(value, excluded.value)',
  );
  app.engine.db.transaction(() => {
    for (const [kind, value] of marks) upsert.run(kind, value);
  })();
}

/** The fork as the CLI's --json and the REST route show it (snake_case, like the rest of the API). */
export function forkJson(r: ForkResult) {
  return {
    data_dir: r.dataDir,
    goal_id: r.goalId,
    position: r.position,
    origin: { head: r.origin.head, at: r.origin.at },
    copied_events: r.copied,
    streams: r.streams,
    head: r.head,
    secrets_not_copied: r.secretsNotCopied.map((s) => ({ name: s.name, scope: s.scope.label })),
    owner: r.ownerName,
    owner_token: r.ownerToken,
  };
}
