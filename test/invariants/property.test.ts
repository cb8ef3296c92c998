import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Engine } from '../../src/engine/engine.js';
import { DomainError } from '../../src/errors.js';
import type { StoredEvent } from '../../src/engine/event.js';
import { cardDecider, cardStream, type CardCommand, type Priority } from '../../testkit/cards.js';
import { dumpTables, PROJECTED_TABLES, testEngine } from '../helpers/engine.js';

/**
 * Random command sequences of the test domain, checked against a small model of the board:
 * - every command is accepted or refused exactly as the model says, with the model's error code;
 * - a refused command (a single one, or a batch with one bad command) changes nothing at all;
 * - re-running a committed command id is a duplicate: same events, same state, nothing appended;
 * - card ids are allocated gap-free (refused and rolled-back commands consume none);
 * - the read rows after incremental apply equal the model and equal the rows after a rebuild;
 * - the chain verifies.
 */
type CardOnly = Exclude<CardCommand, { type: 'OpenCard' }>;
type Single =
  | { kind: 'open'; title: string; column: string; priority: Priority | undefined }
  | { kind: 'card'; card: number; command: CardOnly };
type Batch = { kind: 'batch'; ops: Single[] };
type Op = Single | Batch | { kind: 'retry'; pick: number };

interface ModelCard {
  title: string;
  column: string;
  priority: Priority;
  closed: boolean;
  comments: number;
}
interface Model {
  cards: Map<number, ModelCard>;
  nextId: number;
}
type Outcome = { events: number } | { code: string };

const cloneModel = (m: Model): Model => ({
  cards: new Map([...m.cards].map(([k, v]) => [k, { ...v }])),
  nextId: m.nextId,
});

/** What the command does to the model: the number of events it appends, or the code refusing it. */
function step(m: Model, op: Single): Outcome {
  if (op.kind === 'open') {
    if (op.title.trim().length < 3) return { code: 'ErrInvalidInput' };
    m.cards.set(m.nextId++, {
      title: op.title,
      column: op.column,
      priority: op.priority ?? 'normal',
      closed: false,
      comments: 0,
    });
    return { events: 1 };
  }
  const card = m.cards.get(op.card);
  if (!card) return { code: 'ErrNotFound' };
  if (card.closed) return { code: 'ErrCardClosed' };
  const c = op.command;
  switch (c.type) {
    case 'MoveCard':
      if (c.to === card.column) return { events: 0 };
      card.column = c.to;
      return { events: 1 };
    case 'CommentCard':
      if (!c.text) return { code: 'ErrInvalidInput' };
      card.comments += 1;
      return { events: 1 };
    case 'FinishCard': {
      const events = card.column === 'done' ? 1 : 2;
      Object.assign(card, { column: 'done', closed: true });
      return { events };
    }
    default: {
      const never: never = c;
      return never;
    }
  }
}

function stepAll(m: Model, op: Single | Batch): Outcome {
  if (op.kind !== 'batch') return step(m, op);
  let events = 0;
  for (const inner of op.ops) {
    const outcome = step(m, inner);
    if ('code' in outcome) return outcome;
    events += outcome.events;
  }
  return { events };
}

interface Result {
  events: StoredEvent[];
  duplicate: boolean;
  state?: unknown;
  version?: number;
}

function exec(engine: Engine, op: Single | Batch, commandId: string): Result {
  const options = { actor: 'prop', commandId };
  switch (op.kind) {
    case 'open':
      return engine.transact(options, (uow) => {
        const cardId = uow.ids.next('card');
        const { title, column, priority } = op;
        engine.handle(
          cardDecider,
          cardStream(cardId),
          { type: 'OpenCard', cardId, title, column, priority },
          { actor: 'prop' },
        );
      });
    case 'card':
      return engine.handle(cardDecider, cardStream(op.card), op.command, options);
    case 'batch':
      return engine.transact(options, () => op.ops.forEach((inner) => exec(engine, inner, 'ignored-inside-a-batch')));
    default: {
      const never: never = op;
      return never;
    }
  }
}

/** Everything a command may change: the log head, every projected row, the id sequences, projection positions. */
const snapshot = (engine: Engine) => ({
  head: engine.head(),
  tables: dumpTables(engine.db, PROJECTED_TABLES),
  sequences: engine.db.prepare('SELECT * FROM es_sequences ORDER BY name').all(),
  projections: engine.db.prepare('SELECT * FROM es_projections ORDER BY name').all(),
});

const modelRows = (m: Model) =>
  [...m.cards].map(([id, c]) => ({
    card_id: id,
    title: c.title,
    column_name: c.column,
    priority: c.priority,
    status: c.closed ? 'closed' : 'open',
    comments: c.comments,
  }));

function runSequence(ops: readonly Op[]): void {
  const engine = testEngine();
  try {
    let model: Model = { cards: new Map(), nextId: 1 };
    const committed: { op: Single | Batch; commandId: string; result: Result }[] = [];
    ops.forEach((op, i) => {
      const before = snapshot(engine);
      if (op.kind === 'retry') {
        const original = committed[op.pick % Math.max(committed.length, 1)];
        if (!original) return;
        const again = exec(engine, original.op, original.commandId);
        assert.equal(again.duplicate, true, `retry of ${original.commandId}`);
        assert.deepEqual(again.events, original.result.events);
        assert.deepEqual([again.state, again.version], [original.result.state, original.result.version]);
        assert.deepEqual(snapshot(engine), before);
        return;
      }
      const commandId = `cmd-${i}`;
      const next = cloneModel(model);
      const expected = stepAll(next, op);
      let actual: Outcome;
      try {
        const result = exec(engine, op, commandId);
        assert.equal(result.duplicate, false);
        actual = { events: result.events.length };
        if (result.events.length > 0) committed.push({ op, commandId, result });
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        actual = { code: e.code };
      }
      assert.deepEqual(actual, expected, `op ${i}: ${JSON.stringify(op)}`);
      if ('code' in expected) {
        assert.deepEqual(snapshot(engine), before, `refused op ${i} changed something`);
      } else {
        model = next;
        assert.equal(engine.head().position, before.head.position + expected.events);
      }
    });
    const incremental = dumpTables(engine.db, PROJECTED_TABLES);
    const cards = (incremental.cards as Record<string, unknown>[]).map(
      ({ updated_at: _u, last_position: _p, ...rest }) => rest,
    );
    assert.deepEqual(cards, modelRows(model));
    engine.rebuild([], { pageSize: 7 });
    assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), incremental);
    const verified = engine.verify();
    assert.equal(verified.ok, true, JSON.stringify(verified));
  } finally {
    engine.close();
  }
}

const column = fc.constantFrom('todo', 'doing', 'review', 'done');
const title = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('Write docs', 'Fix the login bug', 'Ship it', 'Café ☕ menu') },
  { weight: 2, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom('', 'ab', '  x  ') },
);
const open: fc.Arbitrary<Single> = fc.record({
  kind: fc.constant('open' as const),
  title,
  column,
  priority: fc.option(fc.constantFrom<Priority>('low', 'normal', 'high'), { nil: undefined }),
});
const command: fc.Arbitrary<CardOnly> = fc.oneof(
  fc.record({ type: fc.constant('MoveCard' as const), to: column }),
  fc.record({
    type: fc.constant('CommentCard' as const),
    text: fc.oneof(fc.constant(''), fc.string({ unit: 'binary', maxLength: 12 })),
  }),
  fc.record({ type: fc.constant('FinishCard' as const), reason: fc.constantFrom('done', 'dropped') }),
);
// Mostly cards that the opening commands created, sometimes one that does not exist.
const card = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 4, max: 9 }) },
);
const cardOp: fc.Arbitrary<Single> = fc.record({ kind: fc.constant('card' as const), card, command });
const single = fc.oneof({ weight: 2, arbitrary: open }, { weight: 5, arbitrary: cardOp });
const batch: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('batch' as const),
  ops: fc.array(single, { minLength: 1, maxLength: 4 }),
});
const retry: fc.Arbitrary<Op> = fc.record({ kind: fc.constant('retry' as const), pick: fc.nat() });
const sequence = fc
  .tuple(
    fc.array(open, { minLength: 1, maxLength: 3 }),
    fc.array(
      fc.oneof({ weight: 6, arbitrary: single }, { weight: 2, arbitrary: batch }, { weight: 2, arbitrary: retry }),
      { maxLength: 30 },
    ),
  )
  .map(([first, rest]): Op[] => [...first, ...rest]);

describe('invariants over random command sequences', () => {
  it('refusals change nothing, duplicates are idempotent, incremental rows equal the model and a rebuild, the chain verifies', () => {
    fc.assert(fc.property(sequence, runSequence), { numRuns: 100 });
  });

  it('holds for a sequence that hits every path at least once', () => {
    const ok = (card: number, c: CardOnly): Single => ({ kind: 'card', card, command: c });
    runSequence([
      { kind: 'open', title: 'First card', column: 'todo', priority: undefined },
      { kind: 'open', title: 'ab', column: 'todo', priority: 'high' },
      ok(1, { type: 'MoveCard', to: 'todo' }),
      ok(1, { type: 'CommentCard', text: '' }),
      ok(2, { type: 'MoveCard', to: 'doing' }),
      {
        kind: 'batch',
        ops: [
          { kind: 'open', title: 'Second card', column: 'doing', priority: 'low' },
          ok(1, { type: 'MoveCard', to: 'doing' }),
        ],
      },
      {
        kind: 'batch',
        ops: [
          { kind: 'open', title: 'Rolled back', column: 'todo', priority: undefined },
          ok(9, { type: 'FinishCard', reason: 'x' }),
        ],
      },
      { kind: 'retry', pick: 1 },
      ok(1, { type: 'FinishCard', reason: 'done' }),
      { kind: 'retry', pick: 2 },
      ok(1, { type: 'CommentCard', text: 'late' }),
      { kind: 'open', title: 'Third card', column: 'done', priority: 'normal' },
      ok(3, { type: 'FinishCard', reason: 'already in done' }),
      { kind: 'retry', pick: 0 },
    ]);
  });
});
