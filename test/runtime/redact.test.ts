import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MASK, redactOutput } from '../../src/runtime/redact.js';

/** Secret values never survive into a command verifier's recorded output tail (src/runtime/redact.ts). */
const MAX = 64;
const tailOf = (text: string): Buffer => {
  const b = Buffer.from(text);
  return b.length > MAX ? b.subarray(b.length - MAX) : b;
};

describe('redactOutput', () => {
  it('masks every occurrence of every value, the longest first', () => {
    assert.equal(
      redactOutput(Buffer.from('key=sk-abc123 again sk-abc123\n'), ['sk-abc123'], MAX),
      `key=${MASK} again ${MASK}\n`,
    );
    assert.equal(redactOutput(Buffer.from('abcdef abc'), ['abc', 'abcdef'], MAX), `${MASK} ${MASK}`);
    assert.equal(redactOutput(Buffer.from('héllo, wörld!'), ['héllo, wörld'], MAX), `${MASK}!`);
  });

  it('leaves output alone when there is nothing long enough to mask', () => {
    assert.equal(redactOutput(Buffer.from('a 1 ab'), ['', 'ab', '1'], MAX), 'a 1 ab');
  });

  it('masks the end of a value that a truncated tail begins with', () => {
    const secret = 'SECRET-VALUE-0123456789';
    for (let cut = 1; cut < secret.length; cut += 1) {
      const text = `${'.'.repeat(10)}${secret}${'-'.repeat(MAX - (secret.length - cut))}`;
      const out = redactOutput(tailOf(text), [secret], MAX);
      assert.ok(out.startsWith(MASK), `cut ${cut}: ${out}`);
      for (let k = 3; k <= secret.length - cut; k += 1)
        assert.ok(!out.includes(secret.slice(cut, cut + k)), `cut ${cut}, ${k} characters leaked`);
    }
  });

  it('masks a multi-byte value cut through one of its characters', () => {
    const secret = 'ééééé-secret';
    const dashes = '-'.repeat(MAX - Buffer.byteLength(secret) + 3); // the tail starts inside the second é
    assert.equal(redactOutput(tailOf(`${secret}${dashes}`), [secret], MAX), `${MASK}${dashes}`);
  });
});
