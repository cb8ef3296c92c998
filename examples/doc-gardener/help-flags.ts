import { execFile } from 'node:child_process';

/**
 * The cli-verifier's source of truth: what the real CLI says about itself. `colony <cmd> --help` is run
 * for the root, each command and each subcommand (found in the "Commands:" sections), a few at a time,
 * and each help page is parsed into its usage line, its options and its subcommands.
 */
export interface HelpOption {
  names: string[];
  spec: string;
}
export interface HelpPage {
  command: string;
  exists: boolean;
  usage: string;
  options: HelpOption[];
  subcommands: string[];
}

function sectionOf(text: string, title: string): string[] {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((l) => l.trim() === title);
  if (start < 0) return [];
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith(' ')) break;
    out.push(l);
  }
  return out;
}

/** `  -n, --limit <n>     how many` → names ["-n", "--limit"]; wrapped description lines carry no option. */
export function parseHelp(command: string, text: string): HelpPage {
  const usage = /^Usage: (.*)$/m.exec(text)?.[1]?.trim() ?? '';
  const expected = `colony${command ? ` ${command}` : ''}`;
  const exists = usage === expected || usage.startsWith(`${expected} `);
  const options: HelpOption[] = [];
  for (const line of sectionOf(text, 'Options:')) {
    const m = /^\s{1,4}(-[^\s,]+(?:,\s*-[^\s,]+)*)((?:\s<[^>]+>|\s\[[^\]]+\])*)/.exec(line);
    if (m) options.push({ names: m[1]!.split(/,\s*/), spec: `${m[1]}${m[2] ?? ''}` });
  }
  const subcommands = sectionOf(text, 'Commands:')
    .map((l) => /^\s{1,4}([a-z][\w-]*)/.exec(l)?.[1])
    .filter((c): c is string => c !== undefined && c !== 'help');
  return { command, exists, usage, options, subcommands: [...new Set(subcommands)] };
}

export type HelpRunner = (command: string) => Promise<string>;

/** `node <colony.js> <cmd…> --help` (the CLI needs no data dir for help). */
export function helpRunner(node: string, colonyBin: string, timeoutMs = 30_000): HelpRunner {
  return (command) =>
    new Promise((resolve, reject) => {
      const args = [colonyBin, ...(command ? command.split(' ') : []), '--help'];
      execFile(
        node,
        args,
        { timeout: timeoutMs, env: { PATH: process.env.PATH, HOME: process.env.HOME, COLONY_DATA: '' } },
        (err, stdout, stderr) => {
          if (err && !stdout)
            reject(new Error(`colony ${command} --help failed: ${stderr.trim().split('\n')[0] ?? err.message}`));
          else resolve(stdout);
        },
      );
    });
}

/** Maps over items with at most `limit` in flight, results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Every help page of the CLI, breadth first from the root, at most `depth` words deep. */
export async function discover(run: HelpRunner, concurrency = 2, depth = 3): Promise<HelpPage[]> {
  const pages: HelpPage[] = [];
  let level = [''];
  for (let d = 0; d <= depth && level.length > 0; d += 1) {
    const found = await pool(level, concurrency, async (c) => parseHelp(c, await run(c)));
    pages.push(...found);
    level = found
      .filter((p) => p.exists)
      .flatMap((p) => p.subcommands.map((s) => (p.command ? `${p.command} ${s}` : s)));
  }
  return pages;
}
