import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../../testkit/temp-dir.js';
import { colony, colonyOk } from '../helpers/cli.js';
import { openApp, productProjections } from '../../src/app.js';
import { appendToStream } from '../../src/engine/store.js';
import { readSchema } from '../../src/engine/pg/projections.js';
import { pgRaw, pgScratch, pgSkip } from '../helpers/pg.js';
import { pgTables, sqliteTables } from '../helpers/read-models.js';

/** `colony migrate --to postgres://…` and `colony verify --store postgres://…` through the real CLI. */
describe('moving a team from SQLite to PostgreSQL', { skip: pgSkip }, () => {
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });
  const team = (owner: string) => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const data = join(dir, 'data');
    colonyOk(['init', '--owner', owner, '--data', data]);
    colonyOk(['config', 'set', 'agent-command', 'true', '--data', data]);
    colonyOk(['token', 'create', '--data', data]);
    return data;
  };
  const scratch = () => {
    const s = pgScratch();
    cleanups.push(() => s.drop());
    return s;
  };
  const sqliteHead = (data: string) => {
    const db = new Database(join(data, 'colony.db'), { readonly: true });
    try {
      return db.prepare('SELECT position, hash FROM es_events ORDER BY position DESC LIMIT 1').get() as {
        position: number;
        hash: string;
      };
    } finally {
      db.close();
    }
  };

  it('copies the log with its chain intact, verifies both sides, and resumes idempotently', async () => {
    const data = team('alice');
    const target = scratch();
    const head = sqliteHead(data);
    const out = colonyOk(['migrate', '--to', target.url, '--tenant', 'alice', '--json', '--data', data]);
    const result = JSON.parse(out) as {
      events: number;
      copied: number;
      head: { position: number; hash: string };
      readSchema: string;
    };
    assert.deepEqual([result.events, result.copied, result.head], [head.position, head.position, head]);
    // The tenant's read models on PostgreSQL hold what the SQLite ones hold, row for row.
    const local = new Database(join(data, 'colony.db'), { readonly: true });
    const raw = await pgRaw(target);
    try {
      assert.equal(result.readSchema, readSchema(target.schema, 'alice'));
      assert.deepEqual(
        await pgTables(raw, result.readSchema, productProjections),
        sqliteTables(local, productProjections),
      );
    } finally {
      local.close();
      await raw.end();
    }

    const verified = colonyOk(['verify', '--store', target.url]);
    assert.match(
      verified,
      new RegExp(
        `^ok: tenant alice: ${head.position} events, chain head ${head.hash} at position ${head.position}\\n$`,
      ),
    );
    colonyOk(['verify', '--data', data]);
    const again = JSON.parse(
      colonyOk(['migrate', '--to', target.url, '--tenant', 'alice', '--json', '--data', data]),
    ) as { copied: number };
    assert.equal(again.copied, 0, 'a second run copies nothing');

    const copy = await pgRaw(target);
    try {
      const rows = await copy.query('SELECT position, hash FROM es_events WHERE tenant = $1 ORDER BY position', [
        'alice',
      ]);
      const db = new Database(join(data, 'colony.db'), { readonly: true });
      const local = db.prepare('SELECT position, hash FROM es_events ORDER BY position').all() as {
        position: number;
        hash: string;
      }[];
      db.close();
      assert.deepEqual(
        rows.rows.map((r: { position: string; hash: string }) => ({ position: Number(r.position), hash: r.hash })),
        local,
      );
    } finally {
      await copy.end();
    }
  });

  it("rebuilds a tenant's read models on PostgreSQL, and names a tenant or projection that is not there", async () => {
    const data = team('carol');
    const target = scratch();
    colonyOk(['migrate', '--to', target.url, '--tenant', 'carol', '--data', data]);
    const schema = readSchema(target.schema, 'carol');
    const raw = await pgRaw(target);
    const local = new Database(join(data, 'colony.db'), { readonly: true });
    try {
      await raw.query(`DELETE FROM "${schema}".users`);
      await raw.query(`UPDATE "${schema}".streams SET version = 99`);
      const out = JSON.parse(colonyOk(['rebuild', '--store', target.url, '--tenant', 'carol', '--json'])) as {
        rebuilt: string[];
        events: number;
      };
      assert.equal(out.rebuilt.length, productProjections.length);
      assert.equal(out.events, sqliteHead(data).position);
      assert.deepEqual(await pgTables(raw, schema, productProjections), sqliteTables(local, productProjections));
      const one = colonyOk(['rebuild', '--store', target.url, '--projection', 'streams']);
      assert.match(one, /^rebuilt streams for every tenant: \d+ events in [\d.]+ s\n$/);
      assert.match(colony(['rebuild', '--store', target.url, '--tenant', 'nobody']).stderr, /no tenant named "nobody"/);
      assert.match(
        colony(['rebuild', '--store', target.url, '--projection', 'nope']).stderr,
        /no projection named nope/,
      );
      assert.match(
        colony(['rebuild', '--tenant', 'carol', '--data', data]).stderr,
        /--tenant is for a PostgreSQL store/,
      );
    } finally {
      local.close();
      await raw.end();
    }
  });

  it('refuses a tenant that holds another log, and reports a broken chain on PostgreSQL', async () => {
    const target = scratch();
    colonyOk(['migrate', '--to', target.url, '--tenant', 'acme', '--data', team('alice')]);
    const other = colony(['migrate', '--to', target.url, '--tenant', 'acme', '--data', team('bobby')]);
    assert.equal(other.code, 1);
    assert.match(
      other.stderr,
      /^colony: tenant acme on the target already holds another log \(head \d+\): choose another --tenant\n$/,
    );
    colonyOk(['migrate', '--to', target.url, '--tenant', 'bobby', '--data', team('bobby')]);

    const raw = await pgRaw(target);
    try {
      await raw.query('ALTER TABLE es_events DISABLE TRIGGER USER');
      await raw.query(`UPDATE es_events SET data = '{"forged":true}' WHERE tenant = 'acme' AND position = 2`);
    } finally {
      await raw.end();
    }
    const broken = colony(['verify', '--store', target.url]);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /verify failed for tenant acme at position 2: hash_mismatch/);
    assert.match(broken.stdout, /^ok: tenant bobby: /m, 'the other tenant still verifies');
  });

  it('runs the domain commands on the moved tenant with --store, refuses the SQLite-only ones, and a store that is not a URL', () => {
    const data = team('carol');
    const target = scratch();
    colonyOk(['migrate', '--to', target.url, '--tenant', 'carol', '--data', data]);
    // The tenant comes with the URL (?tenant=) or $COLONY_TENANT; the data dir keeps only the keys in use.
    const store = `${target.url}&tenant=carol`;
    const prompt = join(data, '..', 'prompt.md');
    writeFileSync(prompt, 'Scout the repository.');
    const create = ['agents', 'create', 'scout', '--model', 'm', '--prompt-file', prompt, '--tools', 'claim_task'];
    colonyOk(['--store', store, ...create, '--data', data]);
    assert.match(
      colonyOk(['agents', 'list', '--data', data], { COLONY_STORE: target.url, COLONY_TENANT: 'carol' }),
      /scout/,
    );
    assert.doesNotMatch(colonyOk(['agents', 'list', '--data', data]), /scout/, 'the SQLite log is left as it was');
    assert.match(colonyOk(['--store', store, 'events', 'tail', '-n', '3', '--data', data]), /AgentRegistered/);
    // A checkpoint signed by one process is kept in the store: the next process lists it.
    const signed = JSON.parse(colonyOk(['--store', store, 'checkpoint', '--json', '--data', data])) as {
      checkpoint: { body: { treeSize: number } };
    };
    const listed = JSON.parse(colonyOk(['--store', store, 'checkpoints', 'list', '--json', '--data', data])) as {
      checkpoint: { body: { treeSize: number } };
    }[];
    assert.deepEqual(
      listed.map((c) => c.checkpoint.body.treeSize),
      [signed.checkpoint.body.treeSize],
    );
    // A goal bundle exported from the tenant verifies, and its checkpoint is kept in the store too.
    const goal = ['goals', 'create', '--title', 'Bundle me', '--description', 'A goal to export.', '--data', data];
    colonyOk(['--store', store, ...goal]);
    const bundle = join(data, '..', 'bundle.json');
    colonyOk(['--store', store, 'export', '--goal', '1', '--out', bundle, '--data', data]);
    assert.match(colonyOk(['verify-bundle', bundle, '--data', data]), /^ok: goal 1/m);
    const kept = JSON.parse(colonyOk(['--store', store, 'checkpoints', 'list', '--json', '--data', data])) as unknown[];
    assert.equal(kept.length, 2, 'the manual checkpoint and the bundle’s');
    const demo = colony(['--store', store, 'demo', '--data', data]);
    assert.equal(demo.code, 1);
    assert.match(demo.stderr, /does not run on a PostgreSQL store \(it builds a data dir of its own\)/);
    const bad = colony(['verify', '--data', data], { COLONY_STORE: 'mysql://x' });
    assert.match(bad.stderr, /--store must be "sqlite" or a postgres:\/\/ URL/);
    assert.equal(colony(['verify', '--data', data], { COLONY_STORE: 'sqlite' }).code, 0);
  });

  it('moves a command bigger than its batch of 5,000 rows whole, and one that a batch would cut', () => {
    const data = team('carol');
    const app = openApp({ dataDir: data, durability: 'normal' });
    try {
      // 3,000 rows, then 6,000 in one command: the first batch would end inside the second command.
      for (const count of [3000, 6000])
        app.engine.transact({ actor: 'system' }, (uow) => {
          const events = Array.from({ length: count }, (_, n) => ({
            type: 'CardCommented',
            data: { cardId: count, n },
          }));
          const stored = appendToStream(app.engine.db, `card-${count}`, 'no_stream', events, uow.meta, uow.now, 0);
          app.engine.projections.apply(app.engine.db, stored);
          uow.appended.push(...stored);
        });
    } finally {
      app.engine.close();
    }
    const target = scratch();
    const head = sqliteHead(data);
    const result = JSON.parse(colonyOk(['migrate', '--to', target.url, '--tenant', 'carol', '--json', '--data', data]));
    assert.deepEqual([result.copied, result.head], [head.position, head]);
  });
});
