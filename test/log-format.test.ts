import assert from 'node:assert/strict';
import { it } from 'node:test';
import { prettyLine } from '../src/log-format.js';

/**
 * The terminal form of a log line (src/log.ts picks it when stderr is a TTY): time, level, message and
 * fields on one line, whatever the fields hold. The JSON form is what serve-log.test.ts reads.
 */
const at = Date.parse('2026-03-01T12:04:05.123Z');

it('prints time, level, message and fields on one line', () => {
  const json = JSON.stringify({
    level: 30,
    time: at,
    pid: 1,
    hostname: 'h',
    svc: 'colony',
    principal: 'user:owner',
    tool: 'create_goal',
    outcome: 'success',
    code: null,
    ms: 3.1,
    msg: 'tool call',
  });
  assert.equal(
    prettyLine(json),
    '12:04:05.123 INFO  tool call principal=user:owner tool=create_goal outcome=success code=null ms=3.1\n',
  );
});

it('shows an error as its type and message, and levels by name', () => {
  const json = JSON.stringify({
    level: 50,
    time: at,
    err: { type: 'TypeError', message: 'x is not a function', stack: 'TypeError: x\n    at y' },
    msg: 'tool call failed',
  });
  assert.equal(prettyLine(json), '12:04:05.123 ERROR tool call failed err="TypeError: x is not a function"\n');
});

it('keeps hostile text to one line with nothing for the terminal to act on', () => {
  const json = JSON.stringify({
    level: 40,
    time: at,
    msg: 'warn \u001b[2J\nnext',
    where: 'a\u009bb\u202ec',
    list: [1, 'two'],
  });
  const line = prettyLine(json);
  assert.equal(line.split('\n').length, 2, 'one line and its newline');
  assert.doesNotMatch(line, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  assert.match(
    line,
    /^12:04:05\.123 WARN {2}warn \\u001b\[2J\\u000anext where="a\\u009bb\\u202ec" list=\[1,"two"\]\n$/,
  );
  assert.equal(prettyLine('not json\u001b'), 'not json\\u001b\n');
});
