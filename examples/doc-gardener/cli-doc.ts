import { CLI_SECTION } from './shared.js';

/**
 * The docs-scanner's reading of a CLI reference (docs/cli.md): the commands and flags its "## Commands" table documents. A row's
 * first cell holds one or more usages in backticks separated by ` / `, e.g.
 * | `colony secrets list [--scope S] [--all] [--json]` / `colony secrets revoke NAME --scope S \| --id ID` | … |
 * The command is the lowercase words after `colony`; its flags are every `-x` / `--name` in the usage.
 */
export interface DocumentedCommand {
  command: string;
  flags: string[];
  usage: string[];
}

const PIPE = '\u0000';
const FLAG = /(?:^|[\s[(|])(--?[a-zA-Z][\w-]*)/g;

/** The lines of the section with this heading, up to the next heading of the same level. */
export function section(markdown: string, heading: string): string[] {
  const lines = markdown.split(/\r?\n/);
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) return [];
  const level = /^#+/.exec(heading)![0];
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^${level} `).test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The usages of a table row's first cell (escaped `\|` stays inside the usage). */
export function usagesOfRow(row: string): string[] {
  const cells = row.replaceAll('\\|', PIPE).split('|');
  const first = cells[1] ?? '';
  return [...first.matchAll(/`([^`]+)`/g)]
    .map((m) => m[1]!.replaceAll(PIPE, '|').trim())
    .filter((u) => /^colony\s/.test(u));
}

/** `colony agents create NAME --model M` → { command: "agents create", flags: ["--model"] }. */
export function parseUsage(usage: string): { command: string; flags: string[] } {
  const words = usage.split(/\s+/).slice(1);
  const path: string[] = [];
  for (const w of words) {
    if (!/^[a-z][a-z-]*$/.test(w)) break;
    path.push(w);
  }
  const rest = words.slice(path.length).join(' ');
  const flags = [...rest.matchAll(FLAG)].map((m) => m[1]!);
  return { command: path.join(' '), flags: [...new Set(flags)] };
}

/** Every command the section documents, in order of first mention, with the union of its flags. */
export function documentedCommands(markdown: string, heading = CLI_SECTION): DocumentedCommand[] {
  const byCommand = new Map<string, DocumentedCommand>();
  for (const line of section(markdown, heading)) {
    if (!line.trimStart().startsWith('|')) continue;
    for (const usage of usagesOfRow(line)) {
      const { command, flags } = parseUsage(usage);
      if (!command) continue;
      const entry = byCommand.get(command) ?? { command, flags: [], usage: [] };
      entry.flags = [...new Set([...entry.flags, ...flags])];
      entry.usage.push(usage);
      byCommand.set(command, entry);
    }
  }
  return [...byCommand.values()];
}
