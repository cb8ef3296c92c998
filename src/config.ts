import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Durability } from './engine/db.js';
import { invalidInput } from './errors.js';

/** Where Colony keeps its data: `--data`, else `COLONY_DATA`, else `./.colony`. */
export function resolveDataDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.COLONY_DATA ?? '.colony');
}

export const databaseFile = (dataDir: string): string => join(dataDir, 'colony.db');

export const isInitialized = (dataDir: string): boolean => existsSync(databaseFile(dataDir));

export function parseDurability(value: string | undefined): Durability {
  const v = (value ?? 'full').toLowerCase();
  if (v === 'full' || v === 'normal') return v;
  throw invalidInput(`--durability must be "full" or "normal", not "${value}"`);
}

export function parsePort(value: string | undefined, fallback = 7070): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw invalidInput(`--port must be an integer 0–65535, not "${value}"`);
  return port;
}

export function parsePositiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw invalidInput(`${name} must be a non-negative integer, not "${value}"`);
  return n;
}

/**
 * A positive integer from the environment (unset or empty: the fallback). A bad value is an error naming
 * the variable, never a silent fallback: a cap that quietly reverts to its default is no cap the owner set.
 */
export function envPositiveInt(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = /^[0-9]+$/.test(raw.trim()) ? Number(raw) : NaN; // no hex, exponents or fractions
  if (!Number.isSafeInteger(n) || n < 1)
    throw invalidInput(`${name} must be a positive integer, not "${raw}"`, { field: name });
  return n;
}

/** Serve's automatic checkpoints (evidence/auto-checkpoint.ts): by growth of the log, and by time. */
export const DEFAULT_CHECKPOINT_EVENTS = 1000;
export const DEFAULT_CHECKPOINT_MINUTES = 10;

/** `--checkpoint-events` / `--checkpoint-minutes`: a non-negative integer (0 = off). */
export function parseCheckpointSetting(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw invalidInput(`${name} must be a non-negative integer (0 turns it off), not "${raw}"`);
  return Number(raw);
}

/** A draft goal's stall time (runtime/goal-stalls.ts), checked by serve before it writes anything. */
export const goalStallSec = (env: NodeJS.ProcessEnv = process.env): number =>
  envPositiveInt('COLONY_GOAL_STALL_SEC', 120, env);
