import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import { migrate, openDatabase, userVersion, type Migration } from '../../src/engine/db.js';
import { Engine } from '../../src/engine/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';

const pragma = (db: Database, name: string): unknown => db.pragma(name, { simple: true });

const tableNames = (db: Database): string[] =>
  (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map(
    (r) => r.name,
  );

describe('openDatabase', () => {
  let tmp: ReturnType<typeof tempDir>;
  const opened: Database[] = [];
  const open = (...args: Parameters<typeof openDatabase>): Database => {
    const db = openDatabase(...args);
    opened.push(db);
    return db;
  };
  before(() => {
    tmp = tempDir();
  });
  after(() => {
    for (const db of opened) if (db.open) db.close();
    tmp.cleanup();
  });

  it('puts a file database in WAL mode', () => {
    const db = open(join(tmp.dir, 'wal.db'));
    assert.equal(pragma(db, 'journal_mode'), 'wal');
  });

  it('uses synchronous FULL by default', () => {
    const db = open(join(tmp.dir, 'full.db'));
    assert.equal(pragma(db, 'synchronous'), 2);
  });

  it("uses synchronous NORMAL with durability 'normal'", () => {
    const db = open(join(tmp.dir, 'normal.db'), { durability: 'normal' });
    assert.equal(pragma(db, 'synchronous'), 1);
    assert.equal(pragma(db, 'journal_mode'), 'wal');
  });

  it("uses synchronous FULL with durability 'full' given explicitly", () => {
    const db = open(join(tmp.dir, 'explicit-full.db'), { durability: 'full' });
    assert.equal(pragma(db, 'synchronous'), 2);
  });

  it('turns foreign keys on', () => {
    const db = open(join(tmp.dir, 'fk.db'));
    assert.equal(pragma(db, 'foreign_keys'), 1);
    db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent(id))');
    assert.throws(() => db.prepare('INSERT INTO child (p) VALUES (42)').run(), /FOREIGN KEY constraint failed/);
  });

  it('sets a busy timeout of 5000 ms by default', () => {
    const db = open(join(tmp.dir, 'busy.db'));
    assert.equal(pragma(db, 'busy_timeout'), 5000);
  });

  it('sets the busy timeout it is given', () => {
    const db = open(join(tmp.dir, 'busy-custom.db'), { busyTimeoutMs: 250 });
    assert.equal(pragma(db, 'busy_timeout'), 250);
  });

  it('applies the same settings to an in-memory database, which has no WAL', () => {
    const db = open(':memory:');
    assert.equal(pragma(db, 'journal_mode'), 'memory');
    assert.equal(pragma(db, 'synchronous'), 2);
    assert.equal(pragma(db, 'foreign_keys'), 1);
    assert.equal(pragma(db, 'busy_timeout'), 5000);
  });

  it('creates the data directory when it is missing', () => {
    const dir = join(tmp.dir, 'missing', 'deeper');
    assert.equal(existsSync(dir), false);
    const db = open(join(dir, 'colony.db'));
    db.exec('CREATE TABLE t (x)');
    assert.ok(statSync(dir).isDirectory());
    assert.ok(existsSync(join(dir, 'colony.db')));
    assert.equal(statSync(dir).mode & 0o077, 0, 'the data directory is private to its owner');
  });

  it('keeps WAL mode for the next connection to the same file', () => {
    const file = join(tmp.dir, 'reopen.db');
    open(file).close();
    const db = open(file);
    assert.equal(pragma(db, 'journal_mode'), 'wal');
  });

  it('opens read-only only a file that exists, and refuses writes through it', () => {
    const missingDir = join(tmp.dir, 'ro-missing');
    assert.throws(() => open(join(missingDir, 'colony.db'), { readonly: true }));
    assert.equal(existsSync(missingDir), false, 'a read-only open creates nothing');

    const file = join(tmp.dir, 'ro.db');
    open(file).exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    const ro = open(file, { readonly: true });
    assert.deepEqual(ro.prepare('SELECT x FROM t').all(), [{ x: 1 }]);
    assert.throws(() => ro.exec('INSERT INTO t VALUES (2)'), /readonly/);
  });

  it('is what Engine.open uses: a file engine is WAL + FULL unless asked for normal', () => {
    const full = Engine.open({ file: join(tmp.dir, 'engine-full.db') });
    const normal = Engine.open({ file: join(tmp.dir, 'engine-normal.db'), durability: 'normal' });
    try {
      assert.equal(pragma(full.db, 'journal_mode'), 'wal');
      assert.equal(pragma(full.db, 'synchronous'), 2);
      assert.equal(pragma(normal.db, 'synchronous'), 1);
    } finally {
      full.close();
      normal.close();
    }
  });
});

describe('migrate', () => {
  /** Migrations that record each run, so a test can count them. */
  function recording(versions: readonly number[], runs: number[]): Migration[] {
    return versions.map((version) => ({
      version,
      up(db) {
        runs.push(version);
        db.exec(`CREATE TABLE m${version} (x)`);
      },
    }));
  }

  it('runs every migration above user_version in order and returns the new version', () => {
    const db = openDatabase(':memory:');
    const runs: number[] = [];
    assert.equal(migrate(db, recording([1, 2, 3], runs)), 3);
    assert.deepEqual(runs, [1, 2, 3]);
    assert.equal(userVersion(db), 3);
    assert.deepEqual(tableNames(db), ['m1', 'm2', 'm3']);
  });

  it('sorts migrations by version whatever order they are given in', () => {
    const db = openDatabase(':memory:');
    const runs: number[] = [];
    migrate(db, recording([3, 1, 2], runs));
    assert.deepEqual(runs, [1, 2, 3]);
  });

  it('is a no-op when re-run', () => {
    const db = openDatabase(':memory:');
    const runs: number[] = [];
    const migrations = recording([1, 2], runs);
    migrate(db, migrations);
    assert.equal(migrate(db, migrations), 2);
    assert.deepEqual(runs, [1, 2]);
    assert.equal(userVersion(db), 2);
  });

  it('runs only the migrations above the stored user_version', () => {
    const db = openDatabase(':memory:');
    const runs: number[] = [];
    migrate(db, recording([1, 2], runs));
    runs.length = 0;
    assert.equal(migrate(db, recording([1, 2, 3, 5], runs)), 5);
    assert.deepEqual(runs, [3, 5]);
    assert.equal(userVersion(db), 5);
  });

  it('runs each migration once across a re-open of a file database', () => {
    const tmp = tempDir();
    try {
      const file = join(tmp.dir, 'm.db');
      const runs: number[] = [];
      const first = openDatabase(file);
      migrate(first, recording([1, 2], runs));
      first.close();
      const second = openDatabase(file);
      migrate(second, recording([1, 2, 3], runs));
      second.close();
      assert.deepEqual(runs, [1, 2, 3]);
    } finally {
      tmp.cleanup();
    }
  });

  it('leaves user_version at the last good migration and rolls back the one that throws', () => {
    const db = openDatabase(':memory:');
    const migrations: Migration[] = [
      { version: 1, up: (d) => d.exec('CREATE TABLE a (x); INSERT INTO a VALUES (1)') },
      {
        version: 2,
        up(d) {
          d.exec('CREATE TABLE b (x); INSERT INTO a VALUES (2)');
          throw new Error('migration 2 is broken');
        },
      },
      { version: 3, up: (d) => d.exec('CREATE TABLE c (x)') },
    ];
    assert.throws(() => migrate(db, migrations), /migration 2 is broken/);
    assert.equal(userVersion(db), 1);
    assert.deepEqual(tableNames(db), ['a'], 'neither b nor c exists');
    assert.deepEqual(db.prepare('SELECT x FROM a').all(), [{ x: 1 }], "migration 2's insert was rolled back");
    assert.equal(db.inTransaction, false);
  });

  it('resumes at the failed migration once it is fixed', () => {
    const db = openDatabase(':memory:');
    const runs: number[] = [];
    const good = recording([1, 2], runs);
    assert.throws(() =>
      migrate(db, [
        good[0]!,
        {
          version: 2,
          up: () => {
            throw new Error('not yet');
          },
        },
      ]),
    );
    assert.equal(migrate(db, good), 2);
    assert.deepEqual(runs, [1, 2]);
  });

  it('rolls back a failed migration on a file database too (the version survives a re-open)', () => {
    const tmp = tempDir();
    try {
      const file = join(tmp.dir, 'fail.db');
      const db = openDatabase(file);
      assert.throws(() =>
        migrate(db, [
          { version: 1, up: (d) => d.exec('CREATE TABLE a (x)') },
          {
            version: 2,
            up: (d) => {
              d.exec('CREATE TABLE b (x)');
              throw new Error('boom');
            },
          },
        ]),
      );
      db.close();
      const again = openDatabase(file);
      assert.equal(userVersion(again), 1);
      assert.deepEqual(tableNames(again), ['a']);
      again.close();
    } finally {
      tmp.cleanup();
    }
  });
});
