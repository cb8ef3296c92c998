import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The ext-apps View runtime (App, PostMessageTransport, the theme helpers) as script text to inline in
 * an MCP App's HTML. Hosts render an App in a sandboxed iframe under a CSP that allows no network by
 * default, so the runtime cannot be loaded from anywhere: the package's bundled ESM build
 * (`app-with-deps.js`, zod included) is read from node_modules once and cached.
 *
 * An inline module cannot be imported from, so the bundle's final `export { a as App, … }` becomes an
 * object, and the whole bundle runs in a function of its own: `const ExtApps = (() => { …; return
 * { App: a, … }; })();` — its thousands of short top-level names cannot collide with the View's code.
 */
const EXPORT_LIST = /export\s*\{([^}]*)\}\s*;?\s*$/;

let cached: string | null = null;

export function viewRuntime(): string {
  if (cached !== null) return cached;
  const file = createRequire(import.meta.url).resolve('@modelcontextprotocol/ext-apps/app-with-deps');
  const source = readFileSync(file, 'utf8');
  const found = EXPORT_LIST.exec(source);
  if (!found)
    throw new Error(
      `${file} does not end with an export list: the ext-apps bundle changed shape, so the approval card cannot inline it`,
    );
  const bindings = found[1]!
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [local, exported = local] = entry.split(/\s+as\s+/) as [string, string?];
      return `${JSON.stringify(exported)}: ${local}`;
    });
  if (!bindings.some((b) => b.startsWith('"App":'))) throw new Error(`${file} does not export App`);
  cached = `const ExtApps = (() => {\n${source.slice(0, found.index)}\nreturn { ${bindings.join(', ')} };\n})();\n`;
  return cached;
}

/**
 * Script text made safe to sit inside `<script>…</script>`. The HTML parser ends a script at the first
 * `</script` whatever the JavaScript around it means, and `<!--` followed by `<script` makes it skip
 * the real end tag; both are rewritten to escapes that mean the same characters in every JavaScript
 * context they can occur in (strings, templates, regular expressions, comments).
 */
export function scriptSafe(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '\\x3C!--');
}
