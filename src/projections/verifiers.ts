import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { VerifierRecipeEvent } from '../events/verifiers.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * Verifier recipes as a read table: one row per recipe, removed ones kept (with `removed_at`) so a task
 * approved against a recipe can still say which command it was. At most one active recipe per
 * (owner, name).
 */
type T = 'verifier_recipes';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.verifier_recipes}" (recipe_id, owner_id, name, command, cwd, writable, timeout_sec, secrets, added_by, added_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  removed: `UPDATE "${t.verifier_recipes}" SET removed_at = ?, removed_by = ? WHERE recipe_id = ?`,
}));

export const verifiersProjection: Projection<VerifierRecipeEvent, T> = {
  name: 'verifier_recipes',
  version: 2,
  handles: ['VerifierRecipeAdded', 'VerifierRecipeRemoved'],
  tables: ['verifier_recipes'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.verifier_recipes}" (
        recipe_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, name TEXT NOT NULL, command TEXT NOT NULL, cwd TEXT,
        writable INTEGER NOT NULL DEFAULT 0, timeout_sec INTEGER NOT NULL,
        secrets TEXT NOT NULL, added_by TEXT NOT NULL, added_at TEXT NOT NULL, removed_at TEXT, removed_by TEXT);
      CREATE INDEX IF NOT EXISTS "${t.verifier_recipes}_by_name" ON "${t.verifier_recipes}" (owner_id, name, removed_at);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'VerifierRecipeAdded': {
        const d = e.data;
        yield run(
          q.insert,
          d.recipeId,
          d.ownerId,
          d.name,
          d.command,
          d.cwd,
          d.writable === true ? 1 : 0,
          d.timeoutSec,
          JSON.stringify(d.secrets),
          d.by.name,
          e.recordedAt,
        );
        return;
      }
      case 'VerifierRecipeRemoved':
        yield run(q.removed, e.recordedAt, e.data.by.name, e.data.recipeId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export interface RecipeRow {
  recipeId: number;
  ownerId: number;
  name: string;
  command: string;
  cwd: string | null;
  writable: boolean;
  timeoutSec: number;
  secrets: string[];
  addedBy: string;
  addedAt: string;
  removedAt: string | null;
}

const ROW = `SELECT recipe_id AS recipeId, owner_id AS ownerId, name, command, cwd, writable, timeout_sec AS timeoutSec, secrets, added_by AS addedBy,
  added_at AS addedAt, removed_at AS removedAt FROM verifier_recipes`;
const toRow = (r: Record<string, unknown> | undefined): RecipeRow | null =>
  r ? { ...(r as unknown as RecipeRow), writable: r.writable === 1, secrets: JSON.parse(r.secrets as string) } : null;

/** The owner's active recipe of that name. */
export const activeRecipe = (db: Database, ownerId: number, name: string): RecipeRow | null =>
  toRow(
    prepared(db, `${ROW} WHERE owner_id = ? AND name = ? AND removed_at IS NULL`).get(ownerId, name) as
      Record<string, unknown> | undefined,
  );

export const getRecipe = (db: Database, recipeId: number): RecipeRow | null =>
  toRow(prepared(db, `${ROW} WHERE recipe_id = ?`).get(recipeId) as Record<string, unknown> | undefined);

/** The owner's recipes by name (active ones; with `all`, removed ones too, newest first within a name). */
export const listRecipes = (db: Database, ownerId: number, all = false): RecipeRow[] =>
  (
    prepared(db, `${ROW} WHERE owner_id = ? AND (? OR removed_at IS NULL) ORDER BY name, recipe_id DESC`).all(
      ownerId,
      all ? 1 : 0,
    ) as Record<string, unknown>[]
  ).map((r) => toRow(r)!);
