import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cancelTaskUnit, releaseTaskUnit, reportUsageUnit, startTaskUnit } from '../../src/actions/tasks.js';
import { claimedBy, claimTaskUnit } from '../../src/actions/tasks/claim.js';
import { openApp, productProjections } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { SqliteEventStore } from '../../src/engine/sqlite-store.js';
import type { EventStore } from '../../src/engine/store-port.js';
import { isDomainError } from '../../src/errors.js';
import { pgScratch, pgSkip } from '../helpers/pg.js';
import { agentOf, makeTeam, ownerOf, raceTeam, type RaceTeam } from '../helpers/race-team.js';
import { assertRebuildEqual } from '../helpers/read-models.js';

/**
 * The task actions written as units of work (claim, start, release, cancel, report usage) run the same
 * on both stores: on SQLite through the store port's unit, on PostgreSQL in one transaction under the
 * tenant's lock, reading the tenant's read models. The same steps give the same answers.
 */
interface World {
  store: EventStore;
  team: RaceTeam;
  /** On PostgreSQL: every read model equals a rebuild (SQLite's rebuild equivalence is test/invariants). */
  settle(): Promise<void>;
  done(): Promise<void>;
}

const KINDS: { name: string; skip: string | false; open(): Promise<World> }[] = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      const dataDir = mkdtempSync(join(tmpdir(), 'colony-units-'));
      const app = openApp({ dataDir, durability: 'normal', clock: fixedClock('2026-04-01T09:00:00.000Z', 1000) });
      const team = { tenant: 'team', ...makeTeam(app, 3, 100) };
      const store = new SqliteEventStore(app.engine, 'team');
      return {
        store,
        team,
        settle: async () => undefined,
        async done() {
          app.engine.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    async open() {
      const scratch = pgScratch();
      const team = await raceTeam(scratch.url, 3, 100);
      const store = await PgEventStore.open(scratch.url, { projections: productProjections });
      return {
        store,
        team,
        settle: () => assertRebuildEqual(store, team.tenant),
        async done() {
          await store.close();
          await scratch.drop();
        },
      };
    },
  },
];

for (const kind of KINDS) {
  describe(`task actions as units of work on ${kind.name}`, { skip: kind.skip }, () => {
    it('claim, start, release, claim by another, report usage, cancel: the answers and the task as each leaves it', async () => {
      const { store, team, settle, done } = await kind.open();
      const agent = (i: number) => agentOf(team, i);
      const owner = ownerOf(team);
      try {
        const first = claimedBy(
          await store.unit(team.tenant, { actor: 'a0' }, () => claimTaskUnit(agent(0), team.taskId)),
          team.taskId,
        );
        assert.deepEqual([first.status, first.renewed], ['claimed', false]);
        await assert.rejects(
          store.unit(team.tenant, { actor: 'a1' }, () => claimTaskUnit(agent(1), team.taskId)),
          (e: unknown) => isDomainError(e) && e.code === 'ErrAlreadyClaimed',
        );
        const started = (await store.unit(team.tenant, { actor: 'a0' }, () => startTaskUnit(agent(0), team.taskId)))
          .value!;
        assert.equal(started.status, 'in_progress');
        await assert.rejects(
          store.unit(team.tenant, { actor: 'a1' }, () => startTaskUnit(agent(1), team.taskId)),
          (e: unknown) => isDomainError(e),
          'only the assignee starts it',
        );
        const released = (
          await store.unit(team.tenant, { actor: 'a0' }, () => releaseTaskUnit(agent(0), team.taskId, 'blocked'))
        ).value!;
        assert.deepEqual([released.status, released.assigneeAgentId], ['approved', null]);
        claimedBy(
          await store.unit(team.tenant, { actor: 'a1' }, () => claimTaskUnit(agent(1), team.taskId)),
          team.taskId,
        );
        const usage = { tokens: 30, cents: 0, note: 'first pass', source: 'report_usage' as const };
        await store.unit(team.tenant, { actor: 'a1' }, () => reportUsageUnit(agent(1), team.taskId, usage));
        await assert.rejects(
          store.unit(team.tenant, { actor: 'a2' }, () => reportUsageUnit(agent(2), team.taskId, usage)),
          (e: unknown) => isDomainError(e) && e.code === 'ErrForbidden',
          'only the assignee, the coordinator or the owner reports usage',
        );
        const cancelled = (
          await store.unit(team.tenant, { actor: 'owner' }, () => cancelTaskUnit(owner, team.taskId, 'not needed'))
        ).value!;
        assert.deepEqual([cancelled.status, cancelled.spentTokens], ['cancelled', 30]);
        await assert.rejects(
          store.unit(team.tenant, { actor: 'x' }, () => cancelTaskUnit({ ...owner, tenant: 999 }, team.taskId, 'no')),
          (e: unknown) => isDomainError(e) && e.code === 'ErrTaskNotFound',
          "another tenant's caller does not see the task",
        );
        await settle();
      } finally {
        await done();
      }
    });
  });
}
