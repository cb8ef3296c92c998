import { createInterface } from 'node:readline';
import { Engine } from '../../src/engine/engine.js';
import { isDomainError } from '../../src/errors.js';
import { streamVersion } from '../../src/engine/store.js';
import { listCards } from '../../testkit/card-projections.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { openCard, runCard, TEST_PROJECTIONS } from './engine.js';
import { prng, type Prng } from './prng.js';

/**
 * A child process for the multi-process invariant tests (test/invariants/). Modes:
 *
 *   crash <file> <seed> <run>
 *     Writes mixed commands to the database forever, until the parent kills it. Prints "opening" before
 *     opening the engine and "ready" after its first command committed. Each command id says what the
 *     command must append — `<run>-<seq>:<kind>:<n>` — so the parent can check all-or-nothing from the log:
 *       open     1 CardOpened                 move    1 CardMoved          comment  1 CardCommented
 *       finish   CardMoved + CardClosed, or only CardClosed when the card already was in `done`
 *       multi    n CardCommented on n different cards, each with the text `<commandId>:<n>` (n = 1..4)
 *       doomed   opens a card and comments n cards, then throws: must leave nothing, not even the card id
 *     About one iteration in a hundred rebuilds the projections instead ("rebuild-start"/"rebuild-end").
 *     It gives up with exit code 3 after a minute, so a writer whose parent died cannot run forever.
 *
 *   grouped <file> <seed> <run>
 *     Group commit under fire: rounds of GROUP callers start together as grouped callers (engine.group.run),
 *     so each round is one batch. Each caller comments 1–3 cards in one command with id
 *     `<run>-<round>-<i>:grouped:<n>` (texts `<commandId>:<n>`); about one caller in ten is doomed (throws
 *     after writing) and must leave nothing. Before a round it prints `round <run>-<round> <callers that are
 *     not doomed>`; after the round's callers were answered it prints
 *     `ack <commandId>` for every one that succeeded, then "ready" after the first round. Runs until killed.
 *
 *   contend <file> <seed> <name> <iterations> <stream,stream,...>
 *     Prints "ready", waits for a "go" line on stdin, then `iterations` times: reads a stream's version
 *     outside any transaction, sometimes waits a moment, and comments the card with that expected version
 *     (text `<name>:<i>:<version read>`). Prints a JSON summary and exits 0. Anything but a success or a
 *     consistent ErrConcurrency makes it exit 1 with the error on stderr.
 */
const [mode, file, seedArg, ...rest] = process.argv.slice(2);
const say = (line: string) => process.stdout.write(`${line}\n`); // synchronous on pipes (Linux)

function fail(e: unknown): never {
  const code = isDomainError(e) ? e.code : (e as { code?: string }).code;
  process.stderr.write(`writer-process ${mode} failed (${code ?? 'no code'}): ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
}

const COLUMNS = ['todo', 'doing', 'review', 'done'] as const;

function crash(rng: Prng, run: string): void {
  say('opening');
  const engine = Engine.open({ file: file!, durability: 'full', projections: TEST_PROJECTIONS });
  const open = new Map<number, string>(); // open card → column, as committed
  for (const card of listCards(engine.db)) if (card.status === 'open') open.set(card.card_id, card.column_name);
  const actor = `writer-${run}`;
  let seq = 0;
  const commandId = (kind: string, n: number) => `${run}-${++seq}:${kind}:${n}`;
  const comment = (cardId: number, text: string) =>
    engine.handle(cardDecider, cardStream(cardId), { type: 'CommentCard', text }, { actor });
  let ready = false;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (Date.now() > deadline) {
      process.stderr.write('writer-process crash: nobody killed me within a minute\n');
      process.exit(3);
    }
    const cards = [...open.keys()];
    const r = rng.next();
    if (cards.length < 4 || (r < 0.12 && cards.length < 40)) {
      const column = rng.pick(['todo', 'doing']);
      open.set(openCard(engine, `card of ${run}`, column, commandId('open', 1)), column);
    } else if (r < 0.3) {
      const id = rng.pick(cards);
      const to = rng.pick(COLUMNS.filter((c) => c !== open.get(id)));
      runCard(engine, id, { type: 'MoveCard', to }, commandId('move', 1));
      open.set(id, to);
    } else if (r < 0.45) {
      const id = rng.pick(cards);
      runCard(engine, id, { type: 'CommentCard', text: 'single' }, commandId('comment', 1));
    } else if (r < 0.58) {
      const id = rng.pick(cards);
      runCard(
        engine,
        id,
        { type: 'FinishCard', reason: 'finished' },
        commandId('finish', open.get(id) === 'done' ? 1 : 2),
      );
      open.delete(id);
    } else if (r < 0.9) {
      const chosen = rng.sample(cards, rng.int(1, 4));
      const id = commandId('multi', chosen.length);
      engine.transact({ actor, commandId: id }, () => chosen.forEach((c) => comment(c, `${id}:${chosen.length}`)));
    } else if (r < 0.99) {
      const chosen = rng.sample(cards, rng.int(1, 4));
      const id = commandId('doomed', chosen.length);
      try {
        engine.transact({ actor, commandId: id }, () => {
          openCard(engine, 'never opened');
          chosen.forEach((c) => comment(c, `${id}:${chosen.length}`));
          throw new Error('doomed');
        });
        throw new Error(`doomed command ${id} committed`);
      } catch (e) {
        if ((e as Error).message !== 'doomed') throw e;
      }
    } else {
      say('rebuild-start');
      engine.rebuild();
      say('rebuild-end');
    }
    if (!ready) say('ready');
    ready = true;
  }
}

export const GROUP = 10;

async function grouped(rng: Prng, run: string): Promise<void> {
  const engine = Engine.open({ file: file!, durability: 'full', projections: TEST_PROJECTIONS });
  const actor = `grouped-${run}`;
  const cards = listCards(engine.db)
    .filter((c) => c.status === 'open')
    .map((c) => c.card_id);
  while (cards.length < 6) cards.push(openCard(engine, `card of ${run}`));
  const deadline = Date.now() + 60_000;
  for (let round = 1; Date.now() < deadline; round++) {
    const plans = Array.from({ length: GROUP }, (_, i) => {
      const chosen = rng.sample(cards, rng.int(1, 3));
      const doomed = rng.next() < 0.1;
      return { chosen, doomed, id: `${run}-${round}-${i}:${doomed ? 'doomed' : 'grouped'}:${chosen.length}` };
    });
    // Said before the batch starts, so the parent knows how many commands a whole batch of this round holds.
    say(`round ${run}-${round} ${plans.filter((p) => !p.doomed).length}`);
    const callers = plans.map(({ chosen, doomed, id }) => {
      return engine.group.run(async () => {
        engine.transact({ actor, commandId: id }, () => {
          for (const c of chosen)
            engine.handle(
              cardDecider,
              cardStream(c),
              { type: 'CommentCard', text: `${id}:${chosen.length}` },
              { actor },
            );
          if (doomed) throw new Error('doomed');
        });
        return id;
      });
    });
    const answers = await Promise.allSettled(callers);
    for (const a of answers) {
      if (a.status === 'fulfilled') say(`ack ${a.value}`);
      else if ((a.reason as Error).message !== 'doomed') throw a.reason;
    }
    if (round === 1) say('ready');
  }
  process.stderr.write('writer-process grouped: nobody killed me within a minute\n');
  process.exit(3);
}

/** What each contending writer prints at the end (read by test/invariants/concurrency.test.ts). */
export interface Summary {
  name: string;
  attempts: number;
  successes: number;
  conflicts: number;
  perStream: Record<string, number>;
}

async function contend(rng: Prng, name: string, iterations: number, streams: readonly string[]): Promise<void> {
  const engine = Engine.open({ file: file!, durability: 'full', projections: TEST_PROJECTIONS });
  const stdin = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => stdin.on('line', (line) => line === 'go' && resolve()));
  say('ready');
  await go;
  stdin.close();
  const summary: Summary = { name, attempts: 0, successes: 0, conflicts: 0, perStream: {} };
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < iterations; i++) {
    const stream = rng.pick(streams);
    const version = streamVersion(engine.db, stream);
    // Widen the window between the read and the write on some iterations (fractions of a millisecond).
    if (rng.next() < 0.5) Atomics.wait(pause, 0, 0, rng.next() * 2);
    summary.attempts += 1;
    try {
      const result = engine.handle(
        cardDecider,
        stream,
        { type: 'CommentCard', text: `${name}:${i}:${version}` },
        {
          actor: name,
          expectedVersion: version,
        },
      );
      const event = result.events[0];
      if (
        result.events.length !== 1 ||
        event?.version !== version + 1 ||
        result.version !== version + 1 ||
        result.duplicate
      ) {
        throw new Error(`append with expected version ${version} to ${stream} gave ${JSON.stringify(result.events)}`);
      }
      summary.successes += 1;
      summary.perStream[stream] = (summary.perStream[stream] ?? 0) + 1;
    } catch (e) {
      if (!isDomainError(e) || e.code !== 'ErrConcurrency') throw e;
      const { streamId, expected, actual } = e.details as { streamId: string; expected: unknown; actual: number };
      if (streamId !== stream || expected !== version || !(actual > version)) {
        throw new Error(`inconsistent ErrConcurrency for ${stream} read at ${version}: ${JSON.stringify(e.details)}`, {
          cause: e,
        });
      }
      summary.conflicts += 1;
    }
  }
  engine.close();
  say(JSON.stringify(summary));
}

try {
  const rng = prng(Number(seedArg));
  if (mode === 'crash') crash(rng, rest[0]!);
  else if (mode === 'grouped') await grouped(rng, rest[0]!);
  else if (mode === 'contend') await contend(rng, rest[0]!, Number(rest[1]), rest[2]!.split(','));
  else throw new Error(`unknown mode ${mode}`);
} catch (e) {
  fail(e);
}
