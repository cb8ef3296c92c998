import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openApp } from '../../src/app.js';
import { readAll } from '../../src/engine/store.js';
import { colony, colonyLive } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The team's agent command through the real CLI: `colony init --agent-command`, `colony config
 * get|set|unset agent-command`, what `agents show` says an agent runs, and `serve` saying at start how
 * agents run — or, with none set, that goals wait and how to change it. Bad input: one line, exit 1,
 * nothing written.
 */
const events = (dir: string): string[] => {
  const app = openApp({ dataDir: dir });
  try {
    return readAll(app.engine.db, { limit: 100_000 }).map((e) => e.type);
  } finally {
    app.engine.close();
  }
};

describe('colony config and init --agent-command', () => {
  it('init sets it; config get/set/unset change it; agents show says whose command an agent runs', (t) => {
    const scratch = tempDir('colony-config-');
    t.after(() => scratch.cleanup());
    const d = ['--data', scratch.dir];
    const init = colony([
      'init',
      '--agent-command',
      'claude -p --output-format json --mcp-config "$COLONY_MCP_CONFIG"',
      ...d,
    ]);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /^agent-command: claude -p --output-format json --mcp-config "\$COLONY_MCP_CONFIG"$/m);
    assert.deepEqual(JSON.parse(colony(['config', 'get', '--json', ...d]).stdout), {
      agent_runtime: null,
      agent_command: 'claude -p --output-format json --mcp-config "$COLONY_MCP_CONFIG"',
      rate_card: {},
    });

    const prompt = join(scratch.dir, 'prompt.txt');
    writeFileSync(prompt, 'You check links in the docs, carefully.');
    assert.equal(
      colony(['agents', 'create', 'linker', '--model', 'm', '--prompt-file', prompt, '--tools', 'whoami', ...d]).code,
      0,
    );
    assert.equal(
      colony([
        'agents',
        'create',
        'own',
        '--model',
        'm',
        '--prompt-file',
        prompt,
        '--tools',
        'whoami',
        '--command',
        'echo mine',
        ...d,
      ]).code,
      0,
    );
    const show = (name: string) =>
      JSON.parse(colony(['agents', 'show', name, '--json', ...d]).stdout) as {
        command: string | null;
        command_source: string | null;
      };
    assert.deepEqual(
      [show('linker').command, show('linker').command_source],
      ['claude -p --output-format json --mcp-config "$COLONY_MCP_CONFIG"', 'team'],
    );
    assert.deepEqual([show('own').command, show('own').command_source], ['echo mine', 'own']);
    assert.match(
      colony(['agents', 'show', 'linker', ...d]).stdout,
      /^command: claude -p .*\(the team's agent-command\)$/m,
    );

    const set = colony(['config', 'set', 'agent-command', 'node /opt/agent.mjs', ...d]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(
      set.stdout,
      /^agent-runtime: command \(the agent-command below\)\nagent-command: node \/opt\/agent.mjs\n/,
    );
    assert.equal(show('linker').command, 'node /opt/agent.mjs');
    const unset = colony(['config', 'unset', 'agent-command', '--json', ...d]);
    assert.deepEqual(JSON.parse(unset.stdout), { agent_runtime: null, agent_command: null, rate_card: {} });
    assert.deepEqual(
      [show('linker').command, show('linker').command_source, show('own').command],
      [null, null, 'echo mine'],
    );
    assert.match(
      colony(['agents', 'show', 'linker', ...d]).stdout,
      /^command: \(none: Colony does not run it; colony config set agent-command CMD\)$/m,
    );
    assert.equal(events(scratch.dir).filter((e) => e === 'AgentCommandSet').length, 3);
  });

  it('refuses a bad key or command with one line, writing nothing — not even the owner of a fresh init', (t) => {
    const scratch = tempDir('colony-config-bad-');
    t.after(() => scratch.cleanup());
    const d = ['--data', scratch.dir];
    const fresh = colony(['init', '--agent-command', 'two\nlines', ...d]);
    assert.deepEqual([fresh.code, fresh.stdout], [1, '']);
    assert.match(
      fresh.stderr,
      /^colony: ErrInvalidInput: the agent command must be one line without control characters\n$/,
    );
    assert.equal(colony(['init', '--json', ...d]).code, 0, 'the failed init left no owner behind: this one makes it');
    const before = events(scratch.dir).length;
    for (const [args, message] of [
      [
        ['config', 'set', 'agent-comand', 'x'],
        /^colony: unknown setting "agent-comand" \(settings: agent-runtime, agent-command, rate-card\)\n$/,
      ],
      [['config', 'set', 'agent-command', '   '], /^colony: ErrInvalidInput: the agent command is empty\n$/],
      [
        ['config', 'set', 'agent-command', 'x'.repeat(5000)],
        /^colony: ErrInvalidInput: the agent command is 5000 characters; at most 4096\n$/,
      ],
      [['config', 'unset', 'nope'], /^colony: unknown setting "nope"/],
    ] as const) {
      const r = colony([...args, ...d]);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, message);
    }
    assert.equal(events(scratch.dir).length, before);
  });

  it('serve says once how agents run, or that goals wait and how to set a command', async (t) => {
    const scratch = tempDir('colony-config-serve-');
    t.after(() => scratch.cleanup());
    for (const [setup, said] of [
      [
        [] as string[],
        /^No agent command is set: Colony starts no coordinator, so a new goal waits in draft .* colony config set agent-command CMD/,
      ],
      [
        ['config', 'set', 'agent-command', 'echo run'],
        /^Agents run with: echo run \(the team's agent-command; an agent's own --command wins\)$/,
      ],
    ] as const) {
      if (setup.length) assert.equal(colony([...setup, '--data', scratch.dir]).code, 0);
      const serve = colonyLive(['serve', '--port', '0', '--data', scratch.dir]);
      try {
        await serve.waitFor(said, 'stderr');
      } finally {
        await serve.stop();
      }
    }
  });

  it('a runtime is checked before anything is written: unknown, its CLI missing, a model the CLI does not take', (t) => {
    const scratch = tempDir('colony-config-runtime-');
    t.after(() => scratch.cleanup());
    const d = ['--data', scratch.dir];
    assert.equal(colony(['init', '--json', ...d]).code, 0);
    const prompt = join(scratch.dir, 'prompt.txt');
    writeFileSync(prompt, 'You write.');
    const create = (name: string, extra: string[], env: NodeJS.ProcessEnv = {}) =>
      colony(['agents', 'create', name, '--prompt-file', prompt, '--tools', 'whoami', ...extra, ...d], env);
    const missing = { COLONY_CODEX_BIN: join(scratch.dir, 'no-codex') };
    const before = events(scratch.dir).length;
    for (const [r, message] of [
      [
        create('a1', ['--model', 'm', '--runtime', 'gemini']),
        /^colony: --runtime must be one of claude-code, codex, opencode, command, not "gemini"\n$/,
      ],
      [
        create('a2', ['--model', 'gpt-5', '--runtime', 'codex'], missing),
        /^colony: runtime codex: COLONY_CODEX_BIN=.*no-codex is not an executable file\n$/,
      ],
      [
        create('a3', ['--model', 'gpt-5', '--runtime', 'opencode']),
        /OpenCode takes provider\/model, such as anthropic\/claude-sonnet-4-5 or openai\/gpt-5, not "gpt-5" \(give --model\)\n$/,
      ],
      [
        create('a4', ['--model', 'gpt-5', '--runtime', 'claude-code']),
        /Claude Code takes a Claude model: an alias \(sonnet, opus, haiku\) or a full name such as claude-sonnet-4-5, not "gpt-5"/,
      ],
      [
        create('a5', ['--model', 'm', '--runtime', 'command']),
        /^colony: runtime command runs a command line, and there is none/,
      ],
      [
        colony(['config', 'set', 'agent-runtime', 'codex', ...d], missing),
        /^colony: runtime codex: .*not an executable file\n$/,
      ],
      [
        colony(['config', 'set', 'agent-runtime', 'nope', ...d]),
        /^colony: agent-runtime must be one of claude-code, codex, opencode, command, not "nope"\n$/,
      ],
    ] as const) {
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, message);
    }
    assert.equal(events(scratch.dir).length, before, 'nothing was written');

    const ok = create('writer', ['--model', 'gpt-5', '--runtime', 'codex', '--json']);
    assert.equal(ok.code, 0, ok.stderr);
    const shown = JSON.parse(colony(['agents', 'show', 'writer', '--json', ...d]).stdout) as Record<string, unknown>;
    assert.deepEqual([shown.runtime, shown.runtime_source, shown.runnable], ['codex', 'own', true]);
    // The team's runtime is refused while an agent that would follow it has a model the runtime does not take.
    assert.equal(create('scribe', ['--model', 'gpt-5']).code, 0);
    const team = colony(['config', 'set', 'agent-runtime', 'opencode', ...d]);
    assert.equal(team.code, 1);
    assert.match(team.stderr, /runtime opencode for scribe: OpenCode takes provider\/model/);
  });
});
