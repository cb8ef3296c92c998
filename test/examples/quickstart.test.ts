import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { COLONY_BIN, colony, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The README's quickstart, run exactly as written: the lines between the quickstart markers,
 * from `colony init` to the report, through the real CLI and the real `serve` with its runtime — the
 * scripted agent (examples/quickstart/agent.mjs) talks to Colony over MCP with $COLONY_MCP_CONFIG alone,
 * confined like any agent. Only the environment differs from a person's terminal: the data dir is a
 * temporary one (COLONY_DATA), `serve` takes any free port (COLONY_PORT=0), since a Colony may already
 * listen on 7070, and the commands run in a scratch directory that links this checkout's examples/ (so
 * report.html and the server's log land there, not in the checkout) while $PWD still names the checkout. A line the README shows a person running again ("run it again to watch") is re-run
 * until it shows what the README promises. The shell's part is done as the shell does it: `CMD 2> FILE &`
 * starts a background job whose stderr goes to FILE, and `kill %N` sends job N SIGTERM.
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

/** Shell words of one line: '…' and "…" quoting, $PWD expanded, a trailing `# comment`, `2> FILE` and `&` noted. */
function words(line: string): { argv: string[]; background: boolean; stderrTo: string | null } {
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
  const redirect = argv.indexOf('2>');
  const stderrTo = redirect < 0 ? null : argv.splice(redirect, 2)[1]!;
  return { argv, background, stderrTo };
}

/** A background job as the shell starts it: its stderr written to a file (`2> FILE`); its stdout is not kept. */
interface Job {
  proc: ChildProcess;
  exited: Promise<number | null>;
  log(): string;
}

function startJob(args: string[], env: NodeJS.ProcessEnv, cwd: string, stderrTo: string): Job {
  const file = join(cwd, stderrTo);
  const fd = openSync(file, 'w');
  const proc = spawn(process.execPath, [COLONY_BIN, ...args], {
    cwd,
    env: { ...process.env, COLONY_DATA: '', ...env },
    stdio: ['ignore', 'ignore', fd],
  });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, exited, log: () => readFileSync(file, 'utf8') };
}

async function logShows(job: Job, pattern: RegExp, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pattern.test(job.log())) {
    if (job.proc.exitCode !== null) assert.fail(`exited before ${pattern}; its log:\n${job.log()}`);
    if (Date.now() > end) assert.fail(`${pattern} not in the log within ${timeoutMs / 1000} s:\n${job.log()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `kill %N`: SIGTERM, as the shell sends it; SIGKILL if the job has not ended after `graceMs`. Resolves with its exit code. */
async function kill(job: Job, graceMs = 10_000): Promise<number | null> {
  if (job.proc.exitCode === null && job.proc.signalCode === null) job.proc.kill('SIGTERM');
  const killer = setTimeout(() => job.proc.kill('SIGKILL'), graceMs);
  try {
    return await job.exited;
  } finally {
    clearTimeout(killer);
  }
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
  it('runs as written: init → serve → an agent → a goal → the plan → approve → the hand-ins verified → the goal completed → the report → the server stopped', async (t) => {
    const scratch = tempDir('colony-quickstart-');
    t.after(() => scratch.cleanup());
    const env = { COLONY_DATA: join(scratch.dir, '.colony'), COLONY_PORT: '0' };
    symlinkSync(join(REPO, 'examples'), join(scratch.dir, 'examples'));
    const cli = (argv: string[]) => colony(argv, env, scratch.dir);
    const jobs: Job[] = [];
    t.after(async () => {
      await Promise.all(jobs.map((job) => kill(job)));
    });
    const lines = quickstartLines();
    assert.deepEqual(
      lines.slice(0, 2).map((l) => words(l).argv[0]),
      ['npm', 'npx'],
    );
    const seen: string[] = [];
    for (const line of lines) {
      const { argv, background, stderrTo } = words(line);
      if (argv[0] === 'npm') continue; // npm install: this checkout is installed already
      if (argv[0] === 'kill') {
        seen.push(argv.join(' '));
        const n = /^%(\d+)$/.exec(argv[1] ?? '');
        assert.ok(n && argv.length === 2, line);
        const job = jobs[Number(n[1]) - 1];
        assert.ok(job, `${line}: no job ${n[1]}`);
        assert.equal(await kill(job), 0, `${line}: the server ends cleanly; its log:\n${job.log()}`);
        assert.match(job.log(), /shutting down/);
        continue;
      }
      assert.deepEqual(argv.slice(0, 2), ['npx', 'colony'], line);
      const args = argv.slice(2);
      seen.push(args.slice(0, 2).join(' '));
      if (background) {
        assert.ok(stderrTo, `${line}: a background job logs to a file`);
        const job = startJob(args, env, scratch.dir, stderrTo);
        jobs.push(job);
        await logShows(job, /^Agents run with: node .*agent\.mjs/m);
        continue;
      }
      let r: CliResult;
      if (args[0] === 'proposals' && args[1] === 'list') {
        r = await until(
          "the coordinator's plan",
          () => cli(args),
          // A row of the list, not "No pending proposals", which the list prints until the plan comes.
          (x) => /^\s*1\s+pending\s/m.test(x.stdout),
        );
      } else if (args[0] === 'goals' && args[1] === 'show' && !seen.includes('tasks verify')) {
        r = await until(
          'both leaves handed in',
          () => cli(args),
          (x) => (x.stdout.match(/\[awaiting_verification\]/g) ?? []).length === 2,
          120_000,
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
      'tasks verify',
      'tasks verify',
      'goals show',
      'report --goal',
      'kill %1',
    ]);
  });
});
