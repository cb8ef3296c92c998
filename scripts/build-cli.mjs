#!/usr/bin/env node
/**
 * Bundles the `colony` CLI (src/cli.ts and everything it imports from src/) into dist/cli/ with esbuild,
 * so bin/colony.js starts without tsx: tsx's loader runs in a thread of its own and answers every module
 * of the ~300 over a message, which cost each `colony` command ~0.5 s of CPU before it did anything.
 * Packages stay imports of node_modules (not bundled); lazily imported commands stay lazy (split chunks).
 *
 * The bundle is only ever used while it is what the sources say: dist/cli/inputs.json lists every source
 * file it was built from with its size and mtime, and bin/colony.js falls back to tsx on the sources
 * when any of them differs or is gone — an edit is never hidden behind an old build. `npm install`
 * (prepare) and `npm test` build it; `npm run build:cli` after editing src/ brings the fast start back.
 *
 * `import.meta.url` is rewritten to the URL of the source file it is written in: the code finds files
 * beside its source (package.json, web/dist, worker boot files, assets) and must find them from the bundle.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'cli');

/** Each source's own `import.meta.url`, as a URL relative to the chunk it ends up in (all chunks share OUT). */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const rel = relative(OUT, args.path).split(sep).join('/');
      return {
        contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`),
        loader: 'ts',
      };
    });
  },
};

/** Chunks of earlier builds are kept this long: a CLI that started on one may still import its lazy chunks. */
const KEEP_OLD_MS = 60 * 60_000;

async function main() {
  const tmp = `${OUT}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/cli.ts'],
    outdir: tmp,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    logLevel: 'warning',
    plugins: [ownUrl],
  });
  const inputs = Object.keys(result.metafile.inputs)
    .sort()
    .map((path) => {
      const s = statSync(join(ROOT, path));
      return [path, s.size, s.mtimeMs];
    });
  writeFileSync(join(tmp, 'inputs.json'), JSON.stringify(inputs));
  // Which sources each file of the bundle holds: what test/cli/startup.test.ts reads to hold the bundle to
  // the same lazy loading as the sources (a command's --help loads none of the app).
  const chunks = Object.fromEntries(
    Object.entries(result.metafile.outputs).map(([file, out]) => [
      relative(tmp, join(ROOT, file)).split(sep).join('/'),
      Object.keys(out.inputs).sort(),
    ]),
  );
  writeFileSync(join(tmp, 'chunks.json'), JSON.stringify(chunks));
  install(tmp, Object.keys(chunks));
  console.log(`colony CLI bundled: ${relative(ROOT, OUT)} (${inputs.length} sources)`);
}

/**
 * Moves the new build into OUT one file at a time (each rename atomic), with a CLI starting meanwhile in
 * mind: the chunks first (content-named: a chunk of the old build with the same name is the same file),
 * then the entry, and inputs.json last — until it is in place the launcher holds the old list against
 * the sources and, if they changed, runs them. Old chunks are not deleted at once: a CLI started on the
 * old build may still import one of its lazy chunks.
 */
function install(tmp, files) {
  mkdirSync(OUT, { recursive: true });
  const last = ['cli.js', 'chunks.json', 'inputs.json'];
  for (const f of [...files.filter((f) => !last.includes(f)), ...last]) renameSync(join(tmp, f), join(OUT, f));
  rmSync(tmp, { recursive: true, force: true });
  const current = new Set([...files, ...last]);
  for (const f of readdirSync(OUT)) {
    if (current.has(f)) continue;
    if (Date.now() - statSync(join(OUT, f)).mtimeMs > KEEP_OLD_MS) rmSync(join(OUT, f), { force: true });
  }
}

await main();
