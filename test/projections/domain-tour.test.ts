import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import { openApp, productProjections, type App } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { domainTour } from '../helpers/domain-tour.js';
import { readSchema } from '../../src/engine/pg/projections.js';
import type { PgPrimary } from '../../src/engine/pg/primary.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { pgScratch, pgSkip, type PgScratch } from '../helpers/pg.js';
import { assertRebuildEqual, pgTables, sqliteTables } from '../helpers/read-models.js';

/**
 * The domain tour (test/helpers/domain-tour.ts) leaves a log with every event type the read models
 * handle, and the read models it built incrementally equal the ones a full rebuild from that log gives.
 */
const EVERY_TYPE = [
  'AgentCommandSet',
  'AgentConfigUpdated',
  'AgentProjectSet',
  'AgentProposed',
  'AgentQuarantined',
  'AgentRegistered',
  'AgentStarted',
  'AgentStopped',
  'AgentUnquarantined',
  'BreakerReset',
  'BreakerTripped',
  'BreakersConfigured',
  'BudgetAlertRaised',
  'ChannelCreated',
  'ClaimExpired',
  'CostRecorded',
  'EvidenceRecorded',
  'GoalActivated',
  'GoalApprovalModeSet',
  'GoalClosed',
  'GoalCreated',
  'GoalPaused',
  'GoalResumed',
  'MessagePosted',
  'MessagesRead',
  'OAuthAuthorizationApproved',
  'OAuthAuthorizationDenied',
  'OAuthClientRegistered',
  'OAuthGrantIssued',
  'OAuthGrantRefreshed',
  'OAuthGrantRevoked',
  'ProbeBurned',
  'ProbeCreated',
  'ProbeExpired',
  'ProbeFired',
  'ProbeUpdated',
  'ProjectArchived',
  'ProjectCreated',
  'ProjectReactivated',
  'ProposalApproved',
  'ProposalRejected',
  'ReactionAdded',
  'ReactionRemoved',
  'ResourceRequestFulfilled',
  'ResourceRequestRejected',
  'ResourceRequested',
  'RunFailed',
  'RunFinished',
  'RunLaunched',
  'RunQueued',
  'RunRefused',
  'RunStarted',
  'RunTimedOut',
  'RunWakeMerged',
  'RuntimeConfigured',
  'SandboxConfigured',
  'SecretRevoked',
  'SecretSet',
  'SecretUsed',
  'SessionMessageRecorded',
  'TaskBlockersSet',
  'TaskBudgetAlertRaised',
  'TaskCancelled',
  'TaskClaimed',
  'TaskCompleted',
  'TaskCreated',
  'TaskDispatched',
  'TaskReleased',
  'TaskStarted',
  'TaskTimedOut',
  'TaskTreeProposed',
  'TaskUpdated',
  'TaskVerified',
  'TokenIssued',
  'TokenRevoked',
  'UserCreated',
  'VerifierRecipeAdded',
  'VerifierRecipeRemoved',
  'WebappPresented',
  'WebappRepresented',
  'WebappRetired',
];

/** Every row of every projection table, ordered by all its columns (an FTS table by rowid too). */
function readModels(db: Database): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const p of productProjections) {
    for (const table of p.tables as readonly string[]) {
      const select = table.endsWith('_fts') ? `SELECT rowid, * FROM "${table}"` : `SELECT * FROM "${table}"`;
      const columns = db.prepare(select).columns().length;
      const order = Array.from({ length: columns }, (_, i) => i + 1).join(', ');
      out[table] = db.prepare(`${select} ORDER BY ${order}`).all();
    }
  }
  return out;
}

describe('the domain tour', () => {
  let dataDir: string;
  let app: App;

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'colony-tour-'));
    const clock = fixedClock('2026-03-01T09:00:00.000Z', 1000);
    app = openApp({ dataDir, durability: 'normal', clock });
    domainTour(app, clock);
  });
  after(() => {
    app.engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves at least one event of every type the read models handle', () => {
    const types = new Set(app.engine.db.prepare('SELECT DISTINCT type FROM es_events').pluck().all() as string[]);
    assert.deepEqual(
      EVERY_TYPE.filter((t) => !types.has(t)),
      [],
      'event types the tour did not produce',
    );
  });

  it('builds the same read models incrementally as a full rebuild from its log', () => {
    const live = readModels(app.engine.db);
    assert.ok(
      Object.values(live).every((rows) => rows.length > 0),
      'every projection table has rows',
    );
    app.engine.rebuild();
    assert.deepEqual(readModels(app.engine.db), live);
  });
});

/**
 * The same tour on a tenant of a PostgreSQL store, through a node's copy (engine/replica.ts): every action
 * of the domain writes through to the store. The store's chain verifies, its read models equal the copy's
 * and a rebuild's, and a second node's copy, made from the store alone, equals the first.
 */
describe('the domain tour on a PostgreSQL tenant, through a node’s copy', { skip: pgSkip }, () => {
  const TENANT = 'tour';
  let dataDir: string;
  let app: App;
  let scratch: PgScratch;
  let store: PgEventStore;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'colony-tour-pg-'));
    scratch = pgScratch();
    const clock = fixedClock('2026-03-01T09:00:00.000Z', 1000);
    app = openApp({ dataDir, durability: 'normal', clock, store: { url: scratch.url, tenant: TENANT } });
    domainTour(app, clock);
    store = await PgEventStore.open(scratch.url, { projections: productProjections });
  });
  after(async () => {
    app.engine.close();
    await store.close();
    await scratch.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('commits every event to the store, whose chain verifies and ends where the copy does', async () => {
    assert.equal((await store.verify(TENANT)).get(TENANT)?.ok, true);
    assert.deepEqual(await store.head(TENANT), app.engine.head());
    const types = new Set((await store.readRows(TENANT, 0, 100_000)).map((r) => r.type));
    assert.deepEqual(
      EVERY_TYPE.filter((t) => !types.has(t)),
      [],
    );
  });

  it('builds the store’s read models equal to the copy’s and to a rebuild', async () => {
    const copy = sqliteTables(app.engine.db, productProjections);
    assert.deepEqual(await pgTables(store.pool, readSchema(scratch.schema, TENANT), productProjections), copy);
    await assertRebuildEqual(store, TENANT);
    // Every write of the domain sent the copy's read-model writes, and each stood (pg/one-trip.ts).
    assert.equal((app.engine.replica!.primary as PgPrimary).stats().fallbacks, 0);
  });

  it('gives another node, starting from the store alone, the same copy', () => {
    const other = openApp({ dataDir, durability: 'normal', store: { url: scratch.url, tenant: TENANT } });
    try {
      assert.deepEqual(other.engine.head(), app.engine.head());
      assert.deepEqual(
        sqliteTables(other.engine.db, productProjections),
        sqliteTables(app.engine.db, productProjections),
      );
    } finally {
      other.engine.close();
    }
  });
});
