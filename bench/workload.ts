import type { Engine } from '../src/engine/engine.js';
import { cardDecider, cardStream, type CardCommand } from '../testkit/cards.js';
import { PAYLOAD_TEXT } from './util.js';

/**
 * The realistic command workload: cards whose streams hold about ten events; each command loads one
 * stream, decides and appends one event (comment, open) or two (finish: move + close).
 */
export class CardWorkload {
  private readonly open: number[] = [];

  constructor(
    private readonly engine: Engine,
    private readonly random: () => number,
  ) {}

  /** Opens `cards` cards with `comments` comments each, in batches of 500 cards per transaction. */
  seed(cards: number, comments: number): void {
    for (let done = 0; done < cards; done += 500) {
      this.engine.transact({ actor: 'bench' }, () => {
        for (let i = done; i < Math.min(cards, done + 500); i++) {
          const id = this.openCard();
          for (let c = 0; c < comments; c++) this.run(id, { type: 'CommentCard', text: PAYLOAD_TEXT });
        }
      });
    }
  }

  /** One command: 80 % comment, 10 % finish (two events), 10 % open a new card. */
  step(): void {
    const r = this.random();
    if (r < 0.1 || this.open.length === 0) {
      this.openCard();
      return;
    }
    const i = Math.floor(this.random() * this.open.length);
    const id = this.open[i]!;
    if (r < 0.2) {
      this.run(id, { type: 'FinishCard', reason: 'done' });
      this.open[i] = this.open[this.open.length - 1]!;
      this.open.pop();
    } else {
      this.run(id, { type: 'CommentCard', text: PAYLOAD_TEXT });
    }
  }

  private openCard(): number {
    const result = this.engine.transact({ actor: 'bench' }, (uow) => {
      const cardId = uow.ids.next('card');
      this.run(cardId, { type: 'OpenCard', cardId, title: `Card ${cardId}`, column: 'todo' });
      return cardId;
    });
    const id = result.value!;
    this.open.push(id);
    return id;
  }

  private run(cardId: number, command: CardCommand): void {
    this.engine.handle(cardDecider, cardStream(cardId), command, { actor: 'bench' });
  }
}
