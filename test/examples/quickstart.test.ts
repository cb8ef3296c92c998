import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { colony, colonyLive, type CliResult, type LiveCli } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The README's quickstart, run exactly as written: the lines between the quickstart markers,
 * from `colony init` to the report, through the real CLI and the real `serve` with its runtime — the
 * scripted agent (examples/quickstart/agent.mjs) talks to Colony over MCP with $COLONY_MCP_CONFIG alone,
 * confined like any agent. Only the environment differs from a person's terminal: the data dir is a
 * temporary one (COLONY_DATA), `serve` takes any free port (COLONY_PORT=0), since a Colony may already
 * listen on 7070, and the commands run in a scratch directory that links this checkout's examples/ (so
 * report.html lands there, not in the checkout) while $PWD still names the checkout. A line the README shows a person running again ("run it again to watch") is re-run
 * until it shows what the README promises.
 */
const REPO = process.cwd();
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

function quickstartLines(): string[] {
  const block = /<!-- quickstart[^>]*-->\s*```sh\n([\s\S]*?)```\s*<!-- \/quickstart -->/.exec(README);
  assert.ok(block, 'README has the quickstart block');
  return block[1]!
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Shell words of one line: '…' and "…" quoting, $PWD expanded, a trailing `# comment` and `&` noted. */
function words(line: string): { argv: string[]; background: boolean } {
  const argv: string[] = [];
  let word: string | null = null;
  let background = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '#' && word === null) break;
    if (c === ' ') {
      if (word !== null) argv.push(word);
      word = null;
    } else if (c === '&' && word === null) {
      background = true;
    } else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      const quoted = line.slice(i + 1, end);
      word = (word ?? '') + (c === '"' ? quoted.replaceAll('$PWD', REPO) : quoted);
      i = end;
    } else {
      word = (word ?? '') + (c === '$' && line.startsWith('$PWD', i) ? ((i += 3), REPO) : c);
    }
  }
  if (word !== null) argv.push(word);
  return { argv, background };
}

async function until(
  what: string,
  run: () => CliResult,
  done: (r: CliResult) => boolean,
  timeoutMs = 60_000,
): Promise<CliResult> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = run();
    if (done(r)) return r;
    if (Date.now() > end)
      assert.fail(`${what}: not seen within ${timeoutMs / 1000} s; last output:\n${r.stdout}${r.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe('the README quickstart', () => {
  it('runs as written: init → serve → an agent → a goal → the plan → approve → the goal completed → the report', async (t) => {
    const scratch = tempDir('colony-quickstart-');
    t.after(() => scratch.cleanup());
    const env = { COLONY_DATA: join(scratch.dir, '.colony'), COLONY_PORT: '0' };
    symlinkSync(join(REPO, 'examples'), join(scratch.dir, 'examples'));
    const cli = (argv: string[]) => colony(argv, env, scratch.dir);
    let serve: LiveCli | null = null;
    t.after(async () => {
      await serve?.stop();
    });
    const lines = quickstartLines();
    assert.deepEqual(
      lines.slice(0, 2).map((l) => words(l).argv[0]),
      ['npm', 'npx'],
    );
    const seen: string[] = [];
    for (const line of lines) {
      const { argv, background } = words(line);
      if (argv[0] === 'npm') continue; // npm install: this checkout is installed already
      assert.deepEqual(argv.slice(0, 2), ['npx', 'colony'], line);
      const args = argv.slice(2);
      seen.push(args.slice(0, 2).join(' '));
      if (background) {
        serve = colonyLive(args, env, scratch.dir);
        await serve.waitFor(/^Agents run with: node .*agent\.mjs/, 'stderr');
        continue;
      }
      let r: CliResult;
      if (args[0] === 'proposals' && args[1] === 'list') {
        r = await until(
          "the coordinator's plan",
          () => cli(args),
          (x) => /pending/.test(x.stdout),
        );
      } else if (args[0] === 'goals' && args[1] === 'show') {
        r = await until(
          'the goal completed',
          () => cli(args),
          (x) => /completed/.test(x.stdout.split('\n')[0] ?? ''),
          120_000,
        );
      } else {
        r = cli(args);
      }
      assert.equal(r.code, 0, `${line}\n${r.stdout}${r.stderr}`);
      if (args[0] === 'init') assert.match(r.stdout, /^agent-command: node .*examples\/quickstart\/agent\.mjs$/m);
      if (args[0] === 'approve') assert.match(r.stdout, /^Approved proposal 1: created tasks 1, 2, 3/m);
      if (args[0] === 'report') assert.ok(existsSync(join(scratch.dir, 'report.html')));
    }
    assert.deepEqual(seen, [
      'init --agent-command',
      'serve',
      'agents create',
      'goals create',
      'proposals list',
      'proposals show',
      'approve 1',
      'goals show',
      'report --goal',
    ]);
  });
});
