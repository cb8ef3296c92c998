import { describe, it } from 'node:test';
import { spec } from '../helpers/decider-spec.js';
import { cardDecider, type CardEvent } from '../../testkit/cards.js';

const opened: CardEvent = {
  type: 'CardOpened',
  data: { cardId: 1, title: 'Write tests', column: 'todo', priority: 'normal' },
};
const closed: CardEvent = { type: 'CardClosed', data: { cardId: 1, column: 'done', reason: 'shipped' } };

describe('the test domain decider (given/when/then)', () => {
  it('opens a card that does not exist yet', () => {
    spec(cardDecider)
      .given([])
      .when({ type: 'OpenCard', cardId: 1, title: 'Write tests', column: 'todo' })
      .then([opened]);
  });

  it('refuses to open a card twice', () => {
    spec(cardDecider)
      .given([opened])
      .when({ type: 'OpenCard', cardId: 1, title: 'Again', column: 'todo' })
      .thenThrows('ErrCardExists');
  });

  it('refuses a title shorter than three characters', () => {
    spec(cardDecider)
      .given([])
      .when({ type: 'OpenCard', cardId: 1, title: 'ab', column: 'todo' })
      .thenThrows('ErrInvalidInput', 'title');
  });

  it('does nothing when moving a card to the column it is in', () => {
    spec(cardDecider).given([opened]).when({ type: 'MoveCard', to: 'todo' }).thenNothingHappened();
  });

  it('finishes a card with two events: moved to done, then closed', () => {
    spec(cardDecider)
      .given([opened])
      .when({ type: 'FinishCard', reason: 'shipped' })
      .then([{ type: 'CardMoved', data: { cardId: 1, from: 'todo', to: 'done' } }, closed]);
  });

  it('refuses any command on a closed card', () => {
    spec(cardDecider).given([opened, closed]).when({ type: 'CommentCard', text: 'late' }).thenThrows('ErrCardClosed');
  });

  it('refuses commands on a card that does not exist', () => {
    spec(cardDecider).given([]).when({ type: 'MoveCard', to: 'doing' }).thenThrows('ErrNotFound');
  });
});
