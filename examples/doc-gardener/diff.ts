import type { DocumentedCommand } from './cli-doc.js';
import { IGNORED_FLAGS, REPORT_HEADER } from './shared.js';

/**
 * Documented versus real, per command: commands the docs (docs/cli.md) document that the CLI does not have,
 * commands the CLI has that the docs do not document, and for each command in both the flags
 * documented but missing from `--help` and the options `--help` shows that the docs do not
 * mention. Global options and --help are never compared. A real option counts as documented when
 * the docs name any of its names (`-n` or `--limit`).
 */
export interface RealCommand {
  command: string;
  options: string[][];
}
export type CommandStatus = 'ok' | 'drift' | 'missing' | 'undocumented';
export interface CommandDiff {
  command: string;
  status: CommandStatus;
  documentedButMissing: string[];
  realButUndocumented: string[];
}
export interface DocDiff {
  commands: CommandDiff[];
  findings: number;
  documented: number;
  real: number;
}

export function diffCommands(documented: readonly DocumentedCommand[], real: readonly RealCommand[]): DocDiff {
  const realBy = new Map(real.map((r) => [r.command, r]));
  const docBy = new Map(documented.map((d) => [d.command, d]));
  const names = [...new Set([...documented.map((d) => d.command), ...real.map((r) => r.command)])].sort();
  const commands = names.map((command): CommandDiff => {
    const doc = docBy.get(command);
    const options = (realBy.get(command)?.options ?? [])
      .map((names) => names.filter((n) => !IGNORED_FLAGS.has(n)))
      .filter((n) => n.length > 0);
    if (!doc)
      return { command, status: 'undocumented', documentedButMissing: [], realButUndocumented: options.map(longest) };
    if (!realBy.has(command))
      return {
        command,
        status: 'missing',
        documentedButMissing: doc.flags.filter((f) => !IGNORED_FLAGS.has(f)),
        realButUndocumented: [],
      };
    const realNames = new Set(options.flat());
    const documentedButMissing = doc.flags.filter((f) => !IGNORED_FLAGS.has(f) && !realNames.has(f));
    const realButUndocumented = options.filter((names) => !names.some((n) => doc.flags.includes(n))).map(longest);
    const status = documentedButMissing.length + realButUndocumented.length === 0 ? 'ok' : 'drift';
    return { command, status, documentedButMissing, realButUndocumented };
  });
  const findings = commands.reduce(
    (n, c) =>
      n +
      (c.status === 'missing' || c.status === 'undocumented'
        ? 1
        : c.documentedButMissing.length + c.realButUndocumented.length),
    0,
  );
  return { commands, findings, documented: documented.length, real: real.length };
}

const longest = (names: string[]): string => names.reduce((a, b) => (b.length > a.length ? b : a));

const list = (xs: readonly string[]): string => (xs.length > 0 ? xs.map((x) => `\`${x}\``).join(', ') : '—');

/** The diff report (Markdown). Its first line is the header the command verifier checks. */
export function renderDiff(diff: DocDiff, source: { doc: string; section: string; cli: string; at: string }): string {
  const count = (s: CommandStatus) => diff.commands.filter((c) => c.status === s).length;
  const rows = diff.commands
    .filter((c) => c.status !== 'ok')
    .map(
      (c) =>
        `| \`colony ${c.command}\` | ${c.status} | ${list(c.documentedButMissing)} | ${list(c.realButUndocumented)} |`,
    );
  return [
    REPORT_HEADER,
    '',
    `Compared ${source.doc} (section "${source.section}") with \`${source.cli} <command> --help\` on ${source.at}.`,
    '',
    `- Commands documented: ${diff.documented}; commands in the CLI: ${diff.real}`,
    `- In agreement: ${count('ok')}; flags drifted: ${count('drift')}; documented but missing: ${count('missing')}; undocumented: ${count('undocumented')}`,
    `- Findings: ${diff.findings}`,
    '',
    '## Findings',
    '',
    ...(rows.length > 0
      ? [
          '| command | status | documented but not in --help | in --help but not documented |',
          '|---|---|---|---|',
          ...rows,
        ]
      : ['The documentation matches the CLI.']),
    '',
  ].join('\n');
}
