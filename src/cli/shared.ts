import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as CliProgress from 'cli-progress';
import type { Command } from 'commander';
import { databaseFile, isInitialized, parseDurability, resolveDataDir } from '../config.js';
import type { Database, Durability } from '../engine/db.js';
import { DomainError } from '../errors.js';
import { isPostgresUrl } from '../engine/store-port.js';
import { NAME_PATTERN } from '../commands/principals.js';
import { oneLine } from '../terminal.js';
import { KEY_FILE } from '../masterkey.js';

// Everything this module imports is cheap: every command's definition imports it, and `colony --help`
// must not load the store (better-sqlite3) or the app. What an action needs is imported when it runs.
const require = createRequire(import.meta.url);

/** What every command reads from the global options. */
export interface GlobalOptions {
  dataDir: string;
  durability: Durability;
  /** A PostgreSQL store URL (--store, $COLONY_STORE); null for the embedded SQLite store in the data dir. */
  store: string | null;
  /** On a PostgreSQL store: the team the domain's commands work on (`?tenant=` in the URL, $COLONY_TENANT, `default`). */
  tenant: string;
}

export function globals(cmd: Command): GlobalOptions {
  const o = cmd.optsWithGlobals<{ data?: string; durability?: string; store?: string }>();
  return {
    dataDir: resolveDataDir(o.data),
    durability: parseDurability(o.durability ?? process.env.COLONY_DURABILITY),
    store: parseStore(o.store ?? process.env.COLONY_STORE),
    tenant: parseTenant(o.store ?? process.env.COLONY_STORE),
  };
}

/** The tenant a command opens on a PostgreSQL store: `?tenant=` in its URL, else $COLONY_TENANT, else `default`. */
function parseTenant(store: string | undefined): string {
  let tenant = process.env.COLONY_TENANT || 'default';
  if (store && isPostgresUrl(store)) {
    try {
      tenant = new URL(store).searchParams.get('tenant') ?? tenant;
    } catch {
      // parseStore's caller reports the bad URL.
    }
  }
  if (tenant.length > 200 || !tenant.isWellFormed() || /[\x00-\x1f]/.test(tenant))
    throw new CliError('the tenant must be a name of at most 200 printable characters');
  return tenant;
}

/** What openApp takes for the data dir's store: null for SQLite, the URL and tenant for PostgreSQL. */
export function appStore(g: GlobalOptions): { url: string; tenant: string } | null {
  return g.store === null ? null : { url: g.store, tenant: g.tenant };
}

/** `sqlite` (or nothing) is the data dir's embedded store; a postgres:// URL is a PostgreSQL store. */
export function parseStore(value: string | undefined): string | null {
  if (value === undefined || value === '' || value === 'sqlite') return null;
  if (isPostgresUrl(value)) return value;
  throw new CliError(`--store must be "sqlite" or a postgres:// URL (got ${JSON.stringify(value)})`);
}

/**
 * The commands that do not run on a PostgreSQL store: the demo builds a data dir of its own. It refuses a
 * PostgreSQL store rather than quietly ignore it.
 */
export const SQLITE_ONLY_COMMANDS: readonly string[] = ['demo'];

export function checkStoreSupported(cmd: Command): void {
  const { store } = globals(cmd);
  const path: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) path.unshift(c.name());
  if (store !== null && SQLITE_ONLY_COMMANDS.includes(path[0] ?? ''))
    throw new CliError(
      `colony ${path.join(' ')} does not run on a PostgreSQL store (it builds a data dir of its own); ` +
        'drop --store / COLONY_STORE to use the SQLite store in the data directory',
    );
}

/**
 * Commands that read an existing store refuse a data dir that was never initialized. On a PostgreSQL
 * store the data dir holds only the keys: its master key is what `colony init` left.
 */
export function requireInitialized(dataDir: string, store: string | null = null): void {
  if (store !== null ? !existsSync(join(dataDir, KEY_FILE)) : !isInitialized(dataDir))
    throw new CliError(`no Colony data in ${dataDir} (run "colony init" first, or pass --data)`);
}

export class CliError extends Error {}

/**
 * Wraps an action: any error becomes one clear line on stderr and exit code 1 — never a stack trace.
 * (Unexpected errors print their stack only with COLONY_DEBUG=1.)
 */
export function action<A extends unknown[]>(fn: (...args: A) => unknown | Promise<unknown>) {
  return async (...args: A): Promise<void> => {
    try {
      await fn(...args);
    } catch (e) {
      const known = e instanceof CliError || e instanceof DomainError;
      const message = e instanceof DomainError ? `${e.code}: ${e.message}` : ((e as Error).message ?? String(e));
      // Messages quote agent text (a DomainError naming a title): escaped, it cannot break the one line or
      // reach the terminal as control sequences. A known error's lines are joined (some domain messages have
      // two, and cutting would hide what follows a quoted newline); an unexpected one keeps its first.
      process.stderr.write(`colony: ${oneLine(known ? message.replace(/\n+/g, ' ') : message.split('\n')[0]!)}\n`);
      if (!known && process.env.COLONY_DEBUG) process.stderr.write(`${(e as Error).stack}\n`);
      process.exitCode = 1;
    }
  };
}

/**
 * `colony runs list | head`: when the reader of the output goes away, the command ends quietly with its
 * status so far (0 unless it had already failed) instead of an EPIPE stack trace. Once, for every command;
 * the returned function takes it back (`colony stdio`, whose MCP transport ends its session itself).
 */
export function endQuietlyWhenOutputCloses(): () => void {
  const onError = (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  };
  for (const stream of [process.stdout, process.stderr]) stream.on('error', onError);
  return () => {
    for (const stream of [process.stdout, process.stderr]) stream.off('error', onError);
  };
}

export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

/** A progress bar on stderr when it is a terminal; a no-op otherwise (CI logs, pipes). */
export function progressBar(label: string): { update(done: number, total: number): void; stop(): void } {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const cliProgress = require('cli-progress') as typeof CliProgress;
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} events | {eta_formatted} left`,
      stream: process.stderr,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(Math.max(total, 1), 0);
        started = true;
      }
      bar.setTotal(Math.max(total, 1));
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

export const formatRate = (n: number): string => Math.round(n).toLocaleString('en-US');

/**
 * Opens an existing store for reading commands (verify, tail) without migrating or rebuilding anything:
 * an auditor's check must not change what it checks.
 */
export async function openExistingStore(dataDir: string): Promise<Database> {
  requireInitialized(dataDir);
  const { openDatabase, userVersion } = await import('../engine/db.js');
  const db = openDatabase(databaseFile(dataDir));
  if (userVersion(db) < 1) {
    db.close();
    throw new CliError(`${databaseFile(dataDir)} is not a Colony database`);
  }
  return db;
}

/**
 * The log for a reading command (events tail, goals at): the data dir's SQLite file, opened without
 * migrating anything; or, on a PostgreSQL store, this process's copy of the tenant, which `refresh`
 * brings up to date with what the nodes committed since.
 */
export async function openLogReader(g: GlobalOptions): Promise<{ db: Database; refresh(): void; close(): void }> {
  const store = appStore(g);
  if (!store) {
    const db = await openExistingStore(g.dataDir);
    return { db, refresh: () => undefined, close: () => db.close() };
  }
  requireInitialized(g.dataDir, g.store);
  const { openApp } = await import('../app.js');
  const app = openApp({ dataDir: g.dataDir, durability: g.durability, store });
  return { db: app.engine.db, refresh: () => void app.engine.catchUp(), close: () => app.engine.close() };
}

/** Checked before anything is created, so a bad name writes nothing. */
export function checkOwnerName(name: string): void {
  if (!NAME_PATTERN.test(name))
    throw new CliError(
      `--owner "${name}" must match ${NAME_PATTERN.source} (lowercase letter first, 3–64 of a-z, 0-9, -)`,
    );
}
