import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffCommands, renderDiff } from '../../examples/doc-gardener/diff.js';
import { parseHelp } from '../../examples/doc-gardener/help-flags.js';
import { documentedCommands, parseUsage, usagesOfRow } from '../../examples/doc-gardener/cli-doc.js';
import { REPORT_HEADER } from '../../examples/doc-gardener/shared.js';

/**
 * The doc-gardener's pure parts: reading the CLI table of docs/cli.md, reading `--help` pages, and the diff
 * the cli-verifier reports (examples/doc-gardener/). The end-to-end run is test/demo/demo.test.ts.
 */
const CLI_DOC = `# CLI

## Commands

| command | what it does |
|---|---|
| \`colony init [--owner NAME] [--json]\` | create |
| \`colony secrets list [--scope S] [--all] [--json]\` / \`colony secrets revoke NAME --scope S \\| --id ID [--json]\` | list / revoke |
| \`colony replay --goal ID (--at ISO \\| --position N) [--json]\` | time travel |
| \`colony audit tail [--tool T] [-n N] [--json]\` | tail |
| \`colony init --gone\` | the same command again |

## MCP tools

| \`colony elsewhere --not-cli\` | not in the Commands section |
`;

const HELP = `Usage: colony audit tail [options]

print the last audit rows

Options:
  --tool <name>       only this tool
  --status <outcome>  only this outcome: success | error | blocked |
                      pending_confirmation
  -n, --limit <n>     how many (default: "20")
  --json              one JSON object per row (NDJSON)
  -h, --help          display help for command
`;

const GROUP = `Usage: colony audit [options] [command]

the audit trail

Options:
  -h, --help        display help for command

Commands:
  tail [options]    print the last audit rows
  export [options]  write the trail as JSON lines
                    to a file
  help [command]    display help for command
`;

describe('doc-gardener: the CLI table of docs/cli.md', () => {
  it('splits a row into its usages, keeping escaped pipes inside a usage', () => {
    assert.deepEqual(usagesOfRow('| `colony a --x` / `colony b --y \\| --z` | text with `colony c` |'), [
      'colony a --x',
      'colony b --y | --z',
    ]);
  });

  it('reads the command words and every short or long flag of a usage', () => {
    assert.deepEqual(parseUsage('colony secrets set NAME VALUE --scope user:NAME|agent:NAME|task:ID [--json]'), {
      command: 'secrets set',
      flags: ['--scope', '--json'],
    });
    assert.deepEqual(parseUsage('colony audit tail [--tool T] [-n N]'), {
      command: 'audit tail',
      flags: ['--tool', '-n'],
    });
    assert.deepEqual(parseUsage('colony replay --goal ID (--at ISO | --position N)'), {
      command: 'replay',
      flags: ['--goal', '--at', '--position'],
    });
  });

  it('lists the commands of the "## Commands" section only, merging rows of the same command', () => {
    const docs = documentedCommands(CLI_DOC);
    assert.deepEqual(
      docs.map((d) => d.command),
      ['init', 'secrets list', 'secrets revoke', 'replay', 'audit tail'],
    );
    assert.deepEqual(docs[0]!.flags, ['--owner', '--json', '--gone']);
    assert.deepEqual(docs[2]!.flags, ['--scope', '--id', '--json']);
    assert.equal(documentedCommands('# no cli here').length, 0);
  });
});

describe('doc-gardener: --help pages', () => {
  it('reads a leaf page: usage, options with all their names, no subcommands', () => {
    const page = parseHelp('audit tail', HELP);
    assert.equal(page.exists, true);
    assert.deepEqual(
      page.options.map((o) => o.names),
      [['--tool'], ['--status'], ['-n', '--limit'], ['--json'], ['-h', '--help']],
    );
    assert.equal(page.options[2]!.spec, '-n, --limit <n>');
    assert.deepEqual(page.subcommands, []);
  });

  it('reads a group page: its subcommands without help, wrapped descriptions ignored', () => {
    assert.deepEqual(parseHelp('audit', GROUP).subcommands, ['tail', 'export']);
  });

  it("a command the CLI does not have answers with another command's page: it does not exist", () => {
    assert.equal(parseHelp('audit nope', GROUP).exists, false);
    assert.equal(parseHelp('aud', GROUP).exists, false);
  });
});

describe('doc-gardener: the diff', () => {
  const documented = [
    { command: 'audit tail', flags: ['--tool', '-n', '--json', '--gone'], usage: [] },
    { command: 'init', flags: ['--owner', '--json'], usage: [] },
    { command: 'vanished', flags: ['--x'], usage: [] },
  ];
  const real = [
    {
      command: 'audit tail',
      options: [['--tool'], ['--status'], ['-n', '--limit'], ['--json'], ['-h', '--help'], ['--data']],
    },
    { command: 'init', options: [['--owner'], ['--json'], ['-h', '--help']] },
    { command: 'demo', options: [['--keep'], ['-h', '--help']] },
  ];

  it('finds per command the flags documented but missing and the options real but undocumented (a short name documents its option)', () => {
    const d = diffCommands(documented, real);
    const by = Object.fromEntries(d.commands.map((c) => [c.command, c]));
    assert.deepEqual(by['audit tail'], {
      command: 'audit tail',
      status: 'drift',
      documentedButMissing: ['--gone'],
      realButUndocumented: ['--status'],
    });
    assert.equal(by.init!.status, 'ok');
    assert.equal(by.vanished!.status, 'missing');
    assert.deepEqual(by.demo, {
      command: 'demo',
      status: 'undocumented',
      documentedButMissing: [],
      realButUndocumented: ['--keep'],
    });
    assert.equal(d.findings, 4);
  });

  it('renders Markdown whose first line is the header the command verifier checks', () => {
    const md = renderDiff(diffCommands(documented, real), {
      doc: 'docs/cli.md',
      section: '## Commands',
      cli: 'colony',
      at: '2026-01-01',
    });
    assert.equal(md.split('\n')[0], REPORT_HEADER);
    assert.match(
      md,
      /^Compared docs\/cli\.md \(section "## Commands"\) with `colony <command> --help` on 2026-01-01\.$/m,
    );
    assert.match(md, /\| `colony audit tail` \| drift \| `--gone` \| `--status` \|/);
    assert.match(md, /Findings: 4/);
    assert.doesNotMatch(md, /`colony init`/);
  });
});
