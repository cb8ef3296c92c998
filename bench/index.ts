import { benchCommands } from './commands.js';
import { benchMcpHttp, benchMcpStdio } from './mcp.js';
import { benchRebuild } from './rebuild.js';
import { scratchDir, type Figure } from './util.js';

/**
 * The benchmark suite behind `colony bench`. Every figure carries the baseline it was measured against
 * in the same run, because these machines are noisy: compare ratios, not absolute numbers.
 */
const TARGETS: Record<string, string> = {
  commands_per_s_full: 'ratio >= 0.6',
  commands_per_s_normal: 'ratio >= 0.6',
  rebuild_events_per_s: '>= 250k/s, ratio >= 0.8',
  commands_vs_sql_floor_full: '(diagnostic)',
  commands_vs_sql_floor_normal: '(diagnostic)',
  verify_events_per_s: '>= 300k/s',
  rebuild_rss_mb: '< 300 MB',
  mcp_http_calls_per_s: '>= 2,000/s, ratio >= 0.7',
  mcp_stdio_calls_per_s: 'ratio >= 0.7',
};

const BASELINES: Record<string, string> = {
  commands_per_s_full: 'raw 1-row IMMEDIATE txn, FULL',
  commands_per_s_normal: 'raw 1-row IMMEDIATE txn, NORMAL',
  commands_vs_sql_floor_full: 'same writes as bare SQL, FULL',
  commands_vs_sql_floor_normal: 'same writes as bare SQL, NORMAL',
  rebuild_events_per_s: 'raw read-and-upsert loop',
  verify_events_per_s: 'raw sha256 loop over rows',
  rebuild_rss_mb: 'RSS before the rebuild',
  mcp_http_calls_per_s: 'SDK minimal server, 10 HTTP sessions',
  mcp_stdio_calls_per_s: 'SDK minimal server over stdio',
};

export async function runBench(options: { json: boolean; quick: boolean }): Promise<Record<string, Figure>> {
  const { dir, cleanup } = scratchDir();
  const say = (s: string) => { if (!options.json) process.stderr.write(`${s}\n`); };
  const results: Record<string, Figure> = {};
  try {
    const rounds = options.quick ? 1 : 3;
    say('commands, durability FULL…');
    const full = benchCommands(dir, 'full', options.quick ? 1500 : 5000, rounds);
    say('commands, durability NORMAL…');
    const normal = benchCommands(dir, 'normal', options.quick ? 5000 : 20000, rounds);
    results.commands_per_s_full = full.vsRaw;
    results.commands_per_s_normal = normal.vsRaw;
    results.commands_vs_sql_floor_full = full.vsFloor;
    results.commands_vs_sql_floor_normal = normal.vsFloor;
    // Before the rebuild's seeding, whose garbage would otherwise land on these in-process figures. The SDK
    // client and server need a few seconds (HTTP) or a few thousand calls (stdio) before their rate settles.
    say('MCP tools/call over Streamable HTTP, 10 sessions…');
    results.mcp_http_calls_per_s = await benchMcpHttp(dir, options.quick ? { seconds: 1, rounds: 3, warmup: 2.5 } : { seconds: 3, rounds: 5, warmup: 3 });
    say('MCP tools/call over stdio, sequential…');
    results.mcp_stdio_calls_per_s = await benchMcpStdio(dir, options.quick ? { calls: 1000, rounds: 3, warmup: 2000 } : { calls: 3000, rounds: 5, warmup: 3000 });
    const events = options.quick ? 100_000 : 1_000_000;
    say(`seeding ${events.toLocaleString('en-US')} events, then rebuild and verify…`);
    Object.assign(results, benchRebuild(dir, events));
  } finally {
    cleanup();
  }
  if (options.json) process.stdout.write(`${JSON.stringify(results)}\n`);
  else process.stdout.write(table(results));
  return results;
}

function table(results: Record<string, Figure>): string {
  const rows = Object.entries(results).map(([name, f]) => [
    name, `${f.value.toLocaleString('en-US')} ${f.unit}`, `${f.baseline.toLocaleString('en-US')}`, f.ratio.toFixed(3),
    BASELINES[name] ?? '', TARGETS[name] ?? '',
  ]);
  const head = ['benchmark', 'value', 'baseline', 'ratio', 'baseline is', 'target'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`;
  return line(head) + line(widths.map((w) => '-'.repeat(w))) + rows.map(line).join('');
}
