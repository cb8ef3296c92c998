import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { colony } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony agents create|update --tools` takes only agent tools that exist. A typo is refused with
 * the closest agent tool, an owner tool as not callable by agents — one line, exit 1, nothing written.
 */
const scratch = tempDir('colony-agents-tools-');
const dir = scratch.dir;
const prompt = join(dir, 'prompt.md');
const run = (...args: string[]) => colony([...args, '--data', dir]);
const eventCount = (): number => JSON.parse(run('verify', '--json').stdout).events;

before(() => {
  assert.equal(run('init').code, 0);
  writeFileSync(prompt, 'You scan documentation pages for stale flags.');
});
after(() => scratch.cleanup());

/** Runs a command that must fail with exactly `line` on stderr and append nothing. */
function refused(args: string[], line: string): void {
  const before = eventCount();
  const r = run(...args);
  assert.equal(r.code, 1, args.join(' '));
  assert.equal(r.stderr, `${line}\n`);
  assert.equal(r.stdout, '');
  assert.equal(eventCount(), before, `${args.join(' ')} wrote nothing`);
}

const create = (tools: string) => [
  'agents',
  'create',
  'scanner',
  '--model',
  'm',
  '--prompt-file',
  prompt,
  '--tools',
  tools,
];

describe('colony agents create --tools', () => {
  it('a typo: did you mean the closest agent tool', () => {
    refused(create('whoami,claim_tsk'), 'colony: ErrInvalidInput: unknown tool claim_tsk: did you mean claim_task?');
  });

  it('an owner-only tool is refused as not callable by agents', () => {
    refused(
      create('whoami,revoke_token'),
      'colony: ErrInvalidInput: revoke_token is an owner tool: agents cannot call it',
    );
  });

  it('a name like no tool gets no suggestion; every problem is on the one line', () => {
    refused(
      create('list_tokens,attachments:write,whoami'),
      'colony: ErrInvalidInput: unknown tool attachments:write; list_tokens is an owner tool: agents cannot call it',
    );
  });

  it('agent tools that exist are accepted', () => {
    const r = run(...create('whoami,claim_task'), '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(run('agents', 'show', 'scanner', '--json').stdout).tool_scope, [
      'claim_task',
      'whoami',
    ]);
  });
});

describe('colony agents update --tools', () => {
  it('refuses a typo and an owner tool the same way, and keeps the old scope', () => {
    refused(
      ['agents', 'update', 'scanner', '--tools', 'whoami,complete_tsak'],
      'colony: ErrInvalidInput: unknown tool complete_tsak: did you mean complete_task?',
    );
    refused(
      ['agents', 'update', 'scanner', '--tools', 'whoami,update_agent'],
      'colony: ErrInvalidInput: update_agent is an owner tool: agents cannot call it',
    );
    assert.deepEqual(JSON.parse(run('agents', 'show', 'scanner', '--json').stdout).tool_scope, [
      'claim_task',
      'whoami',
    ]);
  });

  it('changes the scope to agent tools that exist', () => {
    assert.equal(run('agents', 'update', 'scanner', '--tools', 'whoami,complete_task').code, 0);
    assert.deepEqual(JSON.parse(run('agents', 'show', 'scanner', '--json').stdout).tool_scope, [
      'complete_task',
      'whoami',
    ]);
  });
});
