import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sendToChannel } from '../src/actions/channels.js';
import { createGoal } from '../src/actions/goals.js';
import { proposeTaskTree } from '../src/actions/proposals.js';
import { openApp } from '../src/app.js';
import { action } from '../src/cli/shared.js';
import { guardOutput, oneLine, terminalSafe } from '../src/terminal.js';
import { DomainError } from '../src/errors.js';
import { colony } from './helpers/cli.js';
import { speakerOf } from '../src/actions/principals.js';
import { tempDir } from '../testkit/temp-dir.js';

/**
 * Agent-written text never reaches the owner's terminal as control sequences (ESC, BEL, C1 CSI, bidi
 * overrides) and a field printed in one line cannot start another. The attack runs through the real CLI:
 * an agent's goal, task titles and channel message carry the sequences; every command prints them escaped.
 */
const TITLE = '\x1b[2K\r\x1b]0;owned\x07 csi \u009b31m bidi \u202eevil\u202c';
const TASK = 'Task \x1b[31mred\x1b[0m\nforged line \u2066isolated\u2069';
const BODY = 'hello\r\x1b[2Kfake line \u009b2J\u200f';
/** Everything terminalSafe escapes: C0 but \t and \n, DEL, C1, bidi controls. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const scratch = tempDir('colony-cli-terminal-');
after(() => scratch.cleanup());

function assertSafe(text: string, what: string): void {
  const bad = UNSAFE.exec(text);
  assert.equal(
    bad,
    null,
    `${what} printed U+${bad?.[0].charCodeAt(0).toString(16).padStart(4, '0')}: ${JSON.stringify(text)}`,
  );
}

describe('terminalSafe and oneLine', () => {
  it('escape every control class as a visible \\uXXXX, and nothing else', () => {
    const cases: [string, string][] = [
      ['\x00', '\\u0000'],
      ['\x07', '\\u0007'],
      ['\x1b', '\\u001b'],
      ['\r', '\\u000d'],
      ['\x0b', '\\u000b'],
      ['\x0c', '\\u000c'],
      ['\x7f', '\\u007f'],
      ['\u0080', '\\u0080'],
      ['\u0085', '\\u0085'],
      ['\u009b', '\\u009b'],
      ['\u009f', '\\u009f'],
      ['\u202a', '\\u202a'],
      ['\u202e', '\\u202e'],
      ['\u2066', '\\u2066'],
      ['\u2069', '\\u2069'],
      ['\u200e', '\\u200e'],
      ['\u200f', '\\u200f'],
      ['\u061c', '\\u061c'],
    ];
    for (const [raw, shown] of cases) {
      assert.equal(terminalSafe(`a${raw}b`), `a${shown}b`);
      assert.equal(oneLine(`a${raw}b`), `a${shown}b`);
    }
    const plain = 'Plain text, ünïcödé, 日本語, emoji 🐝, a ¢ and a \\ backslash';
    assert.equal(terminalSafe(plain), plain);
    assert.equal(oneLine(plain), plain);
  });

  it('terminalSafe keeps newlines and tabs; oneLine escapes them and the Unicode line separators', () => {
    assert.equal(terminalSafe('a\nb\tc'), 'a\nb\tc');
    assert.equal(oneLine('a\nb\tc\u2028d\u2029e'), 'a\\u000ab\\u0009c\\u2028d\\u2029e');
    assert.equal(oneLine(TITLE), '\\u001b[2K\\u000d\\u001b]0;owned\\u0007 csi \\u009b31m bidi \\u202eevil\\u202c');
    assert.equal(oneLine(oneLine(TITLE)), oneLine(TITLE), 'idempotent: the stdout guard may see it again');
  });

  it('keeps an NDJSON line valid JSON that parses back to the original (JSON.stringify leaves C1 and bidi raw)', () => {
    const value = { title: `\u009b2J ${TITLE} \u202e`, body: BODY, path: 'C:\\\u009b' };
    const raw = JSON.stringify(value);
    assert.match(raw, /\u009b/, 'JSON.stringify alone leaves U+009B raw');
    const safe = terminalSafe(raw);
    assertSafe(safe, 'the guarded NDJSON line');
    assert.deepEqual(JSON.parse(safe), value);
  });

  it('the stdout guard escapes strings and bytes, whatever the encoding, and keeps the callback', () => {
    const written: string[] = [];
    let called = 0;
    const stream = {
      write: (chunk: string, _encoding?: unknown, cb?: () => void) => (written.push(chunk), cb?.(), true),
    };
    guardOutput(stream as never);
    guardOutput(stream as never); // a second install is a no-op, not a double wrap
    stream.write('a\x1bb\n', () => called++);
    stream.write(Buffer.from('c\u009bd') as never);
    stream.write('\x9b' as never, 'latin1' as never); // one raw byte 0x9B: not UTF-8, so U+FFFD
    assert.deepEqual(written, ['a\\u001bb\n', 'c\\u009bd', '\ufffd']);
    assert.equal(called, 1);
  });

  it('the error line of action() is one escaped line', async () => {
    const lines: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((s: string) => (lines.push(s), true)) as typeof write;
    try {
      await action(() => {
        throw new DomainError('ErrNotFound', `goal "${TITLE}" has no task "${TASK}"`);
      })();
    } finally {
      process.stderr.write = write;
      process.exitCode = undefined;
    }
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.split('\n').length, 2, 'one line and its newline');
    assertSafe(lines[0]!.slice(0, -1), 'the error line');
    // A domain message's own lines are joined with a space; the rest of the quoted text is kept, escaped.
    assert.ok(lines[0]!.includes(oneLine(TASK.replace('\n', ' '))), 'the whole message, not cut at the quoted newline');
  });
});

describe('hostile agent text through the real CLI', () => {
  const dir = join(scratch.dir, 'data');
  let goalId: number;
  let proposalId: number;
  const run = (args: string[]) => {
    const r = colony([...args, '--data', dir]);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assertSafe(r.stdout, `colony ${args.join(' ')}`);
    assertSafe(r.stderr, `colony ${args.join(' ')} (stderr)`);
    return r.stdout;
  };

  before(() => {
    assert.equal(colony(['init', '--data', dir, '--json']).code, 0);
    const app = openApp({ dataDir: dir });
    try {
      // create_goal is an agent tool; the goal's coordinator then writes the tree and a channel message.
      const owner = speakerOf(app, 'user-1');
      const goal = createGoal(
        app,
        owner,
        {
          title: TITLE,
          description: 'An agent-written goal with terminal escapes.',
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 3,
          coordinatorConfig: 'default',
          approvalMode: 'human',
        },
        { actor: 'user:owner' },
      );
      goalId = goal.goalId;
      const coordinator = speakerOf(app, `agent-${goal.coordinatorAgentId}`);
      const actor = { actor: `agent:${coordinator.name}` };
      proposalId = proposeTaskTree(
        app,
        coordinator,
        goalId,
        `Because ${BODY}`,
        { title: TASK, description: 'The work, escaped.' } as never,
        actor,
      ).proposalId;
      sendToChannel(
        app,
        coordinator,
        { id: goal.channelId },
        { body: BODY, subject: null, priority: 5, metadata: null, replyTo: null },
        actor,
      );
    } finally {
      app.engine.close();
    }
  });

  it('approve prints the proposal outcome safely', () => {
    assert.match(run(['approve', String(proposalId)]), /^Approved proposal/);
  });

  it('goals list shows the title escaped in its one line; --json parses back to the title', () => {
    const text = run(['goals', 'list']);
    assert.ok(text.includes('\\u001b[2K'), text);
    assert.ok(text.includes(oneLine(TITLE)), text);
    assert.equal(text.trimEnd().split('\n').length, 1, 'one goal, one line');
    const raw = run(['goals', 'list', '--json']);
    assert.ok(raw.includes('\\u009b') && raw.includes('\\u202e'), 'C1 and bidi escaped in the JSON text');
    const goals = JSON.parse(raw) as { id: number; title: string }[];
    assert.equal(goals.find((g) => g.id === goalId)?.title, TITLE);
  });

  it('goals show escapes the title, the task title (no forged line) and the message', () => {
    const text = run(['goals', 'show', String(goalId)]);
    assert.ok(text.includes(oneLine(TITLE)), text);
    assert.ok(text.includes(oneLine(TASK)), text);
    assert.ok(text.includes(oneLine(BODY)), text);
    assert.ok(
      !text.split('\n').some((l) => l.startsWith('forged line')),
      "the task title's newline did not start a line",
    );
    const snapshot = JSON.parse(run(['goals', 'show', String(goalId), '--json'])) as {
      goal: { title: string };
      recent_events: { body: string }[];
    };
    assert.equal(snapshot.goal.title, TITLE);
    assert.ok(snapshot.recent_events.some((e) => e.body === BODY));
  });

  it('events tail prints safely; --json is NDJSON that parses back to the agent text', () => {
    const text = run(['events', 'tail', '-n', '100']);
    assert.ok(text.includes('\\u001b[2K'), text);
    const events = run(['events', 'tail', '-n', '100', '--json'])
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { data: Record<string, unknown> });
    assert.ok(
      events.some((e) => e.data.title === TITLE),
      'GoalCreated keeps the exact title',
    );
    assert.ok(JSON.stringify(events).includes(JSON.stringify(BODY).slice(1, -1)), 'the message body round-trips');
  });

  it('report prints its summary line safely', () => {
    const text = run(['report', '--goal', String(goalId), '--out', join(scratch.dir, 'report.html')]);
    assert.ok(text.includes(oneLine(TITLE)), text);
  });
});
