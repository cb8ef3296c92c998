import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adapterFor } from '../../src/runtime/adapters/index.js';
import type { JsonObject } from '../../src/runtime/adapters/jsonl.js';
import type { UsageMeter } from '../../src/runtime/adapters/types.js';
import { commandMeter } from '../../src/runtime/usage.js';

/**
 * The usage meters the run meter reads a running CLI's output with (runtime/run-meter.ts): each reads the
 * lines its CLI prints, as the CLI prints them, into the run's usage so far. The lines are shaped as the
 * real CLIs print them (the real-CLI tests run the binaries end to end).
 */
const feed = (meter: UsageMeter, lines: JsonObject[]) => {
  for (const l of lines) meter.line(l);
  return meter.usage();
};

describe('usage meters', () => {
  it('Claude Code: each assistant message once (its usage repeats on every content block), then the result’s totals', () => {
    const meter = adapterFor('claude-code')!.meter({ resumed: false });
    const turn = (id: string, input: number, output: number) => ({
      type: 'assistant',
      message: {
        id,
        usage: {
          input_tokens: input,
          cache_creation_input_tokens: 10,
          cache_read_input_tokens: 5,
          output_tokens: output,
        },
      },
    });
    assert.deepEqual(feed(meter, [{ type: 'system', subtype: 'init' }, turn('m1', 100, 20), turn('m1', 100, 20)]), {
      tokensIn: 115,
      tokensOut: 20,
      cachedIn: 5,
      costUsd: null,
    });
    assert.deepEqual(feed(meter, [turn('m2', 200, 40)]), { tokensIn: 330, tokensOut: 60, cachedIn: 10, costUsd: null });
    const result = {
      type: 'result',
      total_cost_usd: 0.0123,
      usage: { input_tokens: 300, cache_creation_input_tokens: 20, cache_read_input_tokens: 10, output_tokens: 60 },
    };
    assert.deepEqual(feed(meter, [result]), { tokensIn: 330, tokensOut: 60, cachedIn: 10, costUsd: 0.0123 });
  });

  it('Codex: tokens as turns complete; a resumed thread’s turn is the thread’s so far, named by its session', () => {
    const turn = (input: number, output: number) => ({
      type: 'turn.completed',
      usage: { input_tokens: input, cached_input_tokens: 7, output_tokens: output },
    });
    const fresh = adapterFor('codex')!.meter({ resumed: false });
    assert.deepEqual(feed(fresh, [{ type: 'thread.started', thread_id: 't-1' }, turn(100, 10), turn(50, 5)]), {
      tokensIn: 150,
      tokensOut: 15,
      cachedIn: 14,
      costUsd: null,
    });
    const resumed = adapterFor('codex')!.meter({ resumed: true });
    assert.deepEqual(feed(resumed, [{ type: 'thread.started', thread_id: 't-2' }, turn(100, 10), turn(180, 20)]), {
      tokensIn: 180,
      tokensOut: 20,
      cachedIn: 7,
      costUsd: null,
      cumulative: { cliSession: 't-2' },
    });
  });

  it('OpenCode: tokens and cost as each step finishes; a cost of 0 is no price, not free', () => {
    const step = (cost: number) => ({
      type: 'step_finish',
      part: { cost, tokens: { input: 100, output: 20, reasoning: 5, cache: { read: 3, write: 2 } } },
    });
    const meter = adapterFor('opencode')!.meter({ resumed: false });
    assert.deepEqual(feed(meter, [{ type: 'text' }, step(0)]), {
      tokensIn: 105,
      tokensOut: 25,
      cachedIn: 3,
      costUsd: null,
    });
    assert.deepEqual(feed(meter, [step(0.02)]), { tokensIn: 210, tokensOut: 50, cachedIn: 6, costUsd: 0.02 });
  });

  it('a command agent: its last usage line is its usage so far (cumulative), other lines are ignored', () => {
    const meter = commandMeter();
    assert.deepEqual(feed(meter, [{ hello: 'world' }]), { tokensIn: 0, tokensOut: 0, cachedIn: 0, costUsd: null });
    assert.deepEqual(feed(meter, [{ usage: { input_tokens: 40, output_tokens: 2 } }]), {
      tokensIn: 40,
      tokensOut: 2,
      cachedIn: 0,
      costUsd: null,
    });
    assert.deepEqual(
      feed(meter, [{ usage: { input_tokens: 90, output_tokens: 9 }, total_cost_usd: 0.05 }, { note: 1 }]),
      {
        tokensIn: 90,
        tokensOut: 9,
        cachedIn: 0,
        costUsd: 0.05,
      },
    );
  });
});
