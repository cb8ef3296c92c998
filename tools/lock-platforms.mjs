#!/usr/bin/env node
/**
 * `npm ci` refuses a lock that lacks any optional dependency a locked package names — also the
 * platform packages of other systems (opencode-ai's darwin and windows builds). A registry that does not
 * serve those (this project's machines) makes `npm install` leave them out, and CI then fails in seconds.
 * This script checks the lock (`--check`, what test/lockfile.test.ts runs) or adds the missing entries
 * with the os and cpu their names give, so npm ci skips them on every other platform without fetching.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const file = join(import.meta.dirname, '..', 'package-lock.json');
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

const OS = { darwin: 'darwin', linux: 'linux', windows: 'win32', win32: 'win32' };
function platformOf(name) {
  const m = /-(darwin|linux|windows|win32)-(x64|arm64)(?:-|$)/.exec(name);
  return m ? { os: [OS[m[1]]], cpu: [m[2]] } : null;
}

const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const at = `node_modules/${dep}`;
    if (packages[at] || packages[`${path}/${at}`]) continue;
    const platform = platformOf(dep);
    if (platform && /^\d+\.\d+\.\d+/.test(version)) missing.push({ at, version, platform, dev: entry.dev === true });
  }
}

if (process.argv.includes('--check')) {
  for (const m of missing) process.stdout.write(`${m.at}@${m.version}\n`);
  process.exit(missing.length > 0 ? 1 : 0);
}
for (const m of missing)
  packages[m.at] = {
    version: m.version,
    cpu: m.platform.cpu,
    ...(m.dev ? { dev: true } : {}),
    optional: true,
    os: m.platform.os,
  };
const sorted = Object.fromEntries(
  Object.keys(packages)
    .sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)))
    .map((k) => [k, packages[k]]),
);
writeFileSync(file, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
process.stdout.write(`added ${missing.length} platform package(s) to package-lock.json\n`);
