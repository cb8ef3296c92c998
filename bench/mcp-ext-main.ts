/**
 * Only the figures measured from outside the server (bench/mcp-ext.ts), without the whole suite:
 * `node --import tsx bench/mcp-ext-main.ts [--quick]`. Prints them as JSON (`colony bench` runs them too).
 */
import { benchMcpHttpExt, EXT_FULL, EXT_QUICK } from './mcp-ext.js';
import { scratchDir } from './util.js';

const { dir, cleanup } = scratchDir();
try {
  const figures = await benchMcpHttpExt(dir, process.argv.includes('--quick') ? EXT_QUICK : EXT_FULL, (s) =>
    process.stderr.write(`${s}\n`),
  );
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
} finally {
  cleanup();
}
