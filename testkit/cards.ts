import type { Decider } from '../src/engine/decider.js';
import { DomainError, invalidInput } from '../src/errors.js';
import type { Event } from '../src/engine/event.js';
import { registerUpcaster } from '../src/engine/upcasters.js';

/**
 * A small test domain — cards on a board — used by the engine's tests, fixtures and benchmarks.
 * It exercises what real domains will: creation with an allocated id, state-dependent refusals, a
 * command that appends two events, and an event whose shape changed (CardOpened v1 had no priority).
 */
export type Priority = 'low' | 'normal' | 'high';

export type CardOpened = Event<'CardOpened', { cardId: number; title: string; column: string; priority: Priority }>;
export type CardMoved = Event<'CardMoved', { cardId: number; from: string; to: string }>;
export type CardCommented = Event<'CardCommented', { cardId: number; text: string }>;
export type CardClosed = Event<'CardClosed', { cardId: number; column: string; reason: string }>;
export type CardEvent = CardOpened | CardMoved | CardCommented | CardClosed;

export type OpenCard = { type: 'OpenCard'; cardId: number; title: string; column: string; priority?: Priority };
export type MoveCard = { type: 'MoveCard'; to: string };
export type CommentCard = { type: 'CommentCard'; text: string };
/** Moves the card to `done` (if it is elsewhere) and closes it: one command, two events. */
export type FinishCard = { type: 'FinishCard'; reason: string };
export type CardCommand = OpenCard | MoveCard | CommentCard | FinishCard;

export type Card =
  | { status: 'absent' }
  | { status: 'open'; cardId: number; column: string; comments: number }
  | { status: 'closed'; cardId: number; column: string };

export const cardStream = (cardId: number): string => `card-${cardId}`;

/** v1 → v2: CardOpened gained `priority`; cards opened before it are `normal`. */
export const cardOpenedV1toV2 = {
  type: 'CardOpened',
  from: 1,
  upcast: (data: unknown) => ({ priority: 'normal', ...(data as Record<string, unknown>) }),
} as const;
registerUpcaster(cardOpenedV1toV2);

function evolve(state: Card, event: CardEvent): Card {
  switch (event.type) {
    case 'CardOpened':
      return { status: 'open', cardId: event.data.cardId, column: event.data.column, comments: 0 };
    case 'CardMoved':
      return state.status === 'open' ? { ...state, column: event.data.to } : state;
    case 'CardCommented':
      return state.status === 'open' ? { ...state, comments: state.comments + 1 } : state;
    case 'CardClosed':
      return state.status === 'absent' ? state : { status: 'closed', cardId: state.cardId, column: event.data.column };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: CardCommand, state: Card): CardEvent[] {
  if (command.type === 'OpenCard') {
    if (state.status !== 'absent') throw new DomainError('ErrCardExists', `card ${state.cardId} already exists`);
    if (command.title.trim().length < 3)
      throw invalidInput('title must have at least 3 characters', { field: 'title' });
    const { cardId, title, column, priority = 'normal' } = command;
    return [{ type: 'CardOpened', data: { cardId, title, column, priority } }];
  }
  if (state.status === 'absent') throw new DomainError('ErrNotFound', 'card not found');
  if (state.status === 'closed') throw new DomainError('ErrCardClosed', `card ${state.cardId} is closed`);
  const { cardId, column } = state;
  switch (command.type) {
    case 'MoveCard':
      return command.to === column ? [] : [{ type: 'CardMoved', data: { cardId, from: column, to: command.to } }];
    case 'CommentCard':
      if (!command.text) throw invalidInput('comment text must not be empty', { field: 'text' });
      return [{ type: 'CardCommented', data: { cardId, text: command.text } }];
    case 'FinishCard': {
      const move: CardEvent[] =
        column === 'done' ? [] : [{ type: 'CardMoved', data: { cardId, from: column, to: 'done' } }];
      return [...move, { type: 'CardClosed', data: { cardId, column: 'done', reason: command.reason } }];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const cardDecider: Decider<Card, CardCommand, CardEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
