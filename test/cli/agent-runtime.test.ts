import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createProject } from '../../src/actions/projects.js';
import { ownerOf } from '../../src/actions/principals.js';
import { openApp } from '../../src/app.js';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { colony } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony agents wake|stop|start|runtime` and `colony runs list|show` through the real CLI: settings and
 * their defaults, a project for the agent, the stopped gate, and bad input refused with one line.
 */
describe('colony agents runtime controls', () => {
  const scratch = tempDir('colony-cli-runtime-');
  const data = ['--data', scratch.dir];
  const run = (args: string[]) => colony([...args, ...data]);
  before(() => {
    assert.equal(run(['init']).code, 0);
    writeFileSync(join(scratch.dir, 'p.md'), 'You answer at once and exit.');
    assert.equal(
      run([
        'agents',
        'create',
        'echo-bot',
        '--model',
        'm',
        '--prompt-file',
        join(scratch.dir, 'p.md'),
        '--tools',
        'whoami',
        '--command',
        'cat >/dev/null; echo hi',
      ]).code,
      0,
    );
  });

  const BOX =
    '  sandbox on, network allow (api.anthropic.com, statsig.anthropic.com, api.openai.com, generativelanguage.googleapis.com), memory 2048 MB, cpu 900 s, pids 512, file size 1024 MB, disk 10240 MB\n';
  const BOX_JSON = {
    sandbox: 'on',
    network: 'allow',
    allow_hosts: ['api.anthropic.com', 'statsig.anthropic.com', 'api.openai.com', 'generativelanguage.googleapis.com'],
    memory_mb: 2048,
    cpu_sec: 900,
    pids: 512,
    file_size_mb: 1024,
    disk_mb: 10240,
  };

  it('shows and changes the runtime settings; "default" resets one', () => {
    assert.equal(
      run(['agents', 'runtime', 'echo-bot']).stdout,
      `echo-bot (idle): timeout 900s, cooldown 5s, 100 runs/day, 20000000 tokens/day, max trigger depth 5\n${BOX}`,
    );
    const set = JSON.parse(
      run([
        'agents',
        'runtime',
        'echo-bot',
        '--timeout-sec',
        '30',
        '--daily-runs',
        '3',
        '--daily-tokens',
        '5000',
        '--json',
      ]).stdout,
    );
    assert.deepEqual(set, {
      name: 'echo-bot',
      status: 'idle',
      project: null,
      timeout_sec: 30,
      cooldown_sec: 5,
      daily_run_budget: 3,
      daily_token_budget: 5000,
      max_trigger_depth: 5,
      ...BOX_JSON,
    });
    assert.equal(
      JSON.parse(run(['agents', 'runtime', 'echo-bot', '--timeout-sec', 'default', '--json']).stdout).timeout_sec,
      900,
    );
    const bad = run(['agents', 'runtime', 'echo-bot', '--cooldown-sec', '-1']);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, 'colony: --cooldown-sec must be an integer ≥ 0 or "default", not "-1"\n');
  });

  it('sets its confinement: sandbox, network, allow-list and limits; bad values are refused with one line and write nothing', () => {
    const set = JSON.parse(
      run([
        'agents',
        'runtime',
        'echo-bot',
        '--network',
        'none',
        '--memory',
        '256',
        '--cpu-sec',
        '30',
        '--pids',
        '64',
        '--file-size',
        '10',
        '--disk',
        '5',
        '--json',
      ]).stdout,
    );
    assert.deepEqual(
      [set.network, set.memory_mb, set.cpu_sec, set.pids, set.file_size_mb, set.disk_mb],
      ['none', 256, 30, 64, 10, 5],
    );
    assert.match(run(['agents', 'runtime', 'echo-bot']).stdout, /, file size 10 MB, disk 5 MB\n$/);
    const allow = JSON.parse(
      run([
        'agents',
        'runtime',
        'echo-bot',
        '--network',
        'allow',
        '--allow-hosts',
        'api.example.com,*.example.org,10.0.0.1:8443',
        '--json',
      ]).stdout,
    );
    assert.deepEqual(allow.allow_hosts, ['api.example.com', '*.example.org', '10.0.0.1:8443']);
    for (const [flag, value, message] of [
      ['--network', 'open', '--network must be none, allow, host or "default", not "open"'],
      ['--memory', '0', '--memory must be a positive integer or "default", not "0"'],
      ['--disk', '0', '--disk must be a positive integer or "default", not "0"'],
      ['--disk', '1.5', '--disk must be a positive integer or "default", not "1.5"'],
      ['--sandbox', 'maybe', '--sandbox must be on, off or "default", not "maybe"'],
      [
        '--allow-hosts',
        'http://evil',
        'ErrInvalidInput: allow-hosts: "http://evil" is not a host, host:port or *.domain',
      ],
    ] as const) {
      const bad = run(['agents', 'runtime', 'echo-bot', flag, value]);
      assert.deepEqual([bad.code, bad.stderr], [1, `colony: ${message}\n`]);
    }
    const reset = JSON.parse(
      run([
        'agents',
        'runtime',
        'echo-bot',
        '--network',
        'default',
        '--allow-hosts',
        'default',
        '--memory',
        'default',
        '--cpu-sec',
        'default',
        '--pids',
        'default',
        '--file-size',
        'default',
        '--disk',
        'default',
        '--json',
      ]).stdout,
    );
    assert.deepEqual(
      {
        ...reset,
        name: undefined,
        status: undefined,
        project: undefined,
        timeout_sec: undefined,
        cooldown_sec: undefined,
        daily_run_budget: undefined,
        daily_token_budget: undefined,
        max_trigger_depth: undefined,
      },
      {
        name: undefined,
        status: undefined,
        project: undefined,
        timeout_sec: undefined,
        cooldown_sec: undefined,
        daily_run_budget: undefined,
        daily_token_budget: undefined,
        max_trigger_depth: undefined,
        ...BOX_JSON,
      },
    );
    assert.match(run(['agents', 'runtime', 'echo-bot', '--sandbox', 'off']).stdout, /^ {2}sandbox off, /m);
    run(['agents', 'runtime', 'echo-bot', '--sandbox', 'default']);
  });

  it('puts the agent in a project and takes it out again; an unknown project is refused', () => {
    const unknown = run(['agents', 'runtime', 'echo-bot', '--project', 'site']);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'colony: project site not found\n');
    // Projects are made over MCP (project_create); the test makes one with the same action, in-process.
    const app = openApp({ dataDir: scratch.dir });
    const owner = ownerOf(app)!;
    createProject(
      app,
      { key: `user-${owner.userId}`, name: owner.name, tenant: owner.userId },
      { name: 'site', path: '', gitUrl: '', description: '' },
      { actor: 'test' },
    );
    app.engine.close();
    assert.equal(
      run(['agents', 'runtime', 'echo-bot', '--project', 'site']).stdout,
      `echo-bot (idle, project site): timeout 900s, cooldown 5s, 3 runs/day, 5000 tokens/day, max trigger depth 5\n${BOX}`,
    );
    assert.equal(
      JSON.parse(run(['agents', 'runtime', 'echo-bot', '--project', 'none', '--json']).stdout).project,
      null,
    );
  });

  it('stop refuses every wake-up with gate stopped; start lets it be woken; runs list shows the refusal', () => {
    assert.equal(run(['agents', 'stop', 'echo-bot']).stdout, 'Stopped echo-bot\n');
    assert.equal(run(['agents', 'stop', 'echo-bot']).stdout, 'echo-bot was already stopped\n');
    const refused = run(['agents', 'wake', 'echo-bot']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^colony: run \d+ refused by the stopped gate: agent echo-bot is stopped; the owner starts it again with colony agents start echo-bot\n$/,
    );
    assert.equal(run(['agents', 'start', 'echo-bot']).stdout, 'Started echo-bot\n');
    const queued = JSON.parse(run(['agents', 'wake', 'echo-bot', '--prompt', 'hello', '--json']).stdout);
    assert.equal(queued.outcome, 'queued');
    assert.equal(queued.status, 'queued');
    const list = JSON.parse(run(['runs', 'list', '--agent', 'echo-bot', '--json']).stdout) as {
      run_id: number;
      status: string;
      gate: string | null;
    }[];
    assert.deepEqual(
      list.map((r) => [r.status, r.gate]),
      [
        ['queued', null],
        ['refused', 'stopped'],
      ],
    );
    const shown = run(['runs', 'show', String(queued.run_id)]);
    assert.match(shown.stdout, /echo-bot {2}manual {2}queued/);
    assert.match(shown.stdout, /wakes: manual by user-1/);
  });

  it('bad input: unknown agent, bad --task, bad run id, bad --status', () => {
    assert.equal(run(['agents', 'wake', 'ghost']).stderr, 'colony: agent ghost not found\n');
    assert.equal(
      run(['agents', 'wake', 'echo-bot', '--task', 'x']).stderr,
      'colony: --task must be a positive integer, not "x"\n',
    );
    assert.equal(run(['runs', 'show', '0']).stderr, 'colony: run id must be a positive integer, not "0"\n');
    assert.equal(run(['runs', 'show', '999']).stderr, 'colony: run 999 not found\n');
    assert.match(
      run(['runs', 'list', '--status', 'lost']).stderr,
      /^colony: --status must be one of queued, running, refused, succeeded, failed, timed_out, not "lost"\n$/,
    );
  });
});
