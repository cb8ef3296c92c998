// Node 20 shim for @modelcontextprotocol/conformance, which imports `globSync` from 'fs' (Node 22+) and
// so dies at load on Node 20 ("The requested module 'fs' does not provide an export named 'globSync'").
// Use: node --import ./test/helpers/conformance-node20.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js …
//
// A module.register hook: when a module inside the conformance package imports 'fs'/'node:fs', it gets
// this file's `fs` stand-in instead — every export of node:fs plus a small globSync built on
// readdirSync(dir, {recursive: true}). Nothing in node_modules is touched, and nothing changes for any
// other importer. On a Node that has fs.globSync it registers nothing.
import fs from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const STANDIN = 'colony-shim:fs-with-globsync';
// Both installed suites: 0.1.16 (2025-11-25) and 0.2.0-alpha.12 under the alias conformance-2026 (2026-07-28).
const PACKAGES = ['/node_modules/@modelcontextprotocol/conformance/', '/node_modules/conformance-2026/'];

if (isMainThread && typeof fs.globSync !== 'function') register(import.meta.url);

/** Loader hook (runs on the hooks thread). */
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && PACKAGES.some((p) => context.parentURL?.includes(p))) {
    return { url: STANDIN, shortCircuit: true };
  }
  return next(specifier, context);
}

/** Loader hook: the stand-in's source. */
export async function load(url, context, next) {
  if (url !== STANDIN) return next(url, context);
  const names = Object.keys(fs).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default' && n !== 'globSync');
  const source = `
import fs from 'node:fs';
import { join } from 'node:path';
export default fs;
export const { ${names.join(', ')} } = fs;
${globToRegExp.toString()}
export function globSync(pattern, options = {}) {
  const cwd = options.cwd ? String(options.cwd) : process.cwd();
  const patterns = (Array.isArray(pattern) ? pattern : [pattern]).map(globToRegExp);
  let entries;
  try { entries = fs.readdirSync(cwd, { recursive: true }); } catch { return []; }
  return entries.map(String).map((p) => p.split('\\\\').join('/')).filter((p) => patterns.some((re) => re.test(p)));
}`;
  return { format: 'module', source, shortCircuit: true };
}

/** `**` any depth (including none), `*` and `?` within one path segment; everything else literal. */
export function globToRegExp(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        re += '(?:.*/)?';
      } else re += '.*';
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
