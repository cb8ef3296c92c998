#!/usr/bin/env node
// The `colony` CLI. It runs the bundle in dist/cli/ (scripts/build-cli.mjs) when that bundle was built
// from exactly the sources now in src/ — same files, sizes and mtimes — and otherwise the TypeScript
// sources directly through tsx, so `npx colony` works in a checkout without a build and an edit is
// never hidden behind an old one. The bundle starts in about half the CPU time: no tsx loader thread.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);

function bundleIsCurrent() {
  try {
    const inputs = JSON.parse(readFileSync(new URL('dist/cli/inputs.json', root), 'utf8'));
    // Plain paths: a URL per source doubled the ~600 stats' cost, a tenth of a short command's start.
    const dir = fileURLToPath(root);
    return inputs.every(([path, size, mtimeMs]) => {
      const s = statSync(dir + path);
      return s.size === size && s.mtimeMs === mtimeMs;
    });
  } catch {
    return false; // no bundle, or a source gone
  }
}

if (process.env.COLONY_CLI_SOURCES !== '1' && bundleIsCurrent()) {
  await import('../dist/cli/cli.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
