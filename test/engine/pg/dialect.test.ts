import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toPostgres } from '../../../src/engine/pg/dialect.js';

/** The rewrite of shared projection SQL for PostgreSQL (pure text: no server needed). */
describe('SQLite-flavoured SQL rewritten for PostgreSQL', () => {
  it('numbers placeholders, and keeps a named one at its number where it repeats', () => {
    assert.deepEqual(toPostgres('UPDATE t SET a = ?, b = ? WHERE c = ?'), {
      text: 'UPDATE t SET a = $1, b = $2 WHERE c = $3',
      names: null,
    });
    assert.deepEqual(toPostgres('UPDATE t SET a = @x || @y WHERE b = @x'), {
      text: 'UPDATE t SET a = $1 || $2 WHERE b = $1',
      names: ['x', 'y'],
    });
  });

  it('leaves string literals and quoted identifiers alone', () => {
    const { text } = toPostgres(`SELECT '?', 'it''s @x max(a, b)', "we?ird" FROM "t?" WHERE a = ?`);
    assert.equal(text, `SELECT '?', 'it''s @x max(a, b)', "we?ird" FROM "t?" WHERE a = $1`);
  });

  it('turns INSERT OR IGNORE into ON CONFLICT DO NOTHING', () => {
    assert.equal(
      toPostgres('INSERT OR IGNORE INTO "x" (a, b) VALUES (?, ?)').text,
      'INSERT INTO "x" (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING',
    );
  });

  it('tells the scalar max/min from the aggregate', () => {
    assert.equal(
      toPostgres('SELECT max(a), min(b), max(a, coalesce(b, 0)), MIN(x, ?) FROM t').text,
      'SELECT max(a), min(b), GREATEST(a, coalesce(b, 0)), LEAST(x, $1) FROM t',
    );
  });

  it('maps column types and drops WITHOUT ROWID, and quotes camelCase aliases', () => {
    assert.equal(
      toPostgres('CREATE TABLE "t" (id INTEGER PRIMARY KEY, w REAL, b BLOB) WITHOUT ROWID').text,
      'CREATE TABLE "t" (id BIGINT PRIMARY KEY, w DOUBLE PRECISION, b BYTEA) ',
    );
    assert.equal(
      toPostgres('SELECT stream_id AS streamId, kind AS kind FROM s').text,
      'SELECT stream_id AS "streamId", kind AS kind FROM s',
    );
  });

  it('refuses by name what must be written per dialect', () => {
    for (const [sql, what] of [
      ['INSERT OR REPLACE INTO t VALUES (?)', /INSERT OR REPLACE/],
      ['CREATE VIRTUAL TABLE f USING fts5(body)', /CREATE VIRTUAL TABLE/],
      [`UPDATE t SET w = json_insert(w, '$[#]', ?)`, /JSON functions/],
      [`SELECT strftime('%s', at) FROM t`, /strftime/],
      ['SELECT ? + @x', /mixes \? and @name/],
      [`SELECT 'open`, /unterminated/],
    ] as const)
      assert.throws(() => toPostgres(sql), what);
  });
});
