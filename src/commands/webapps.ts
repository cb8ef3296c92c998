import { DomainError, invalidInput } from '../errors.js';
import {
  MAX_APP_PORT,
  MIN_APP_PORT,
  WEBAPP_ID,
  WEBAPP_KINDS,
  type WebappEvent,
  type WebappKind,
  type WebappPresented,
  type WebappRetireReason,
} from '../events/webapps.js';
import type { Decider } from '../engine/decider.js';
import { checkPresentation, validPort, type PresentationFacts } from './webapp-presentation.js';

export { validPort } from './webapp-presentation.js';

/**
 * The web app decider (`webapp-<n>` streams): presented once, then re-presented any number of times;
 * a `port` registration retires when its presenter stops, and a later re-presentation revives it.
 * webapp_present is checked first (CheckPresentation, which writes nothing); only then does the action
 * post the card and record it (PresentWebapp or RepresentWebapp), in the same transaction. The recording
 * commands carry the same facts and are checked again, so no caller can record a presentation unchecked.
 */
/** webapp_present's request with the facts the action gathered: refused in xylocopa's order, or accepted. */
export type CheckPresentation = { type: 'CheckPresentation'; facts: PresentationFacts };
/** A registration as it will be stored, with the facts webapp_present was accepted on. */
export type PresentWebapp = { type: 'PresentWebapp'; app: WebappPresented['data']; facts: PresentationFacts };
export type RepresentWebapp = {
  type: 'RepresentWebapp';
  facts: PresentationFacts;
  title: string;
  description: string;
  agentId: number;
  messageId: number;
};
export type RetireWebapp = { type: 'RetireWebapp'; reason: WebappRetireReason };
export type WebappCommand = CheckPresentation | PresentWebapp | RepresentWebapp | RetireWebapp;

interface Known {
  appId: string;
  kind: WebappKind;
  agentId: number;
}
export type Webapp = { status: 'absent' } | (Known & { status: 'live' }) | (Known & { status: 'retired' });

function evolve(state: Webapp, event: WebappEvent): Webapp {
  if (event.type === 'WebappPresented') {
    const d = event.data;
    return { status: 'live', appId: d.appId, kind: d.kind, agentId: d.agentId };
  }
  if (state.status === 'absent') return state;
  switch (event.type) {
    case 'WebappRepresented':
      return { ...state, status: 'live', agentId: event.data.agentId };
    case 'WebappRetired':
      return { ...state, status: 'retired' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: WebappCommand, state: Webapp): WebappEvent[] {
  if (command.type !== 'RetireWebapp') checkPresentation(command.facts);
  if (command.type === 'CheckPresentation') return [];
  if (command.type === 'PresentWebapp') return present(command.app, state);
  if (state.status === 'absent') throw new DomainError('ErrNotFound', 'web app not found');
  switch (command.type) {
    case 'RepresentWebapp': {
      const { title, description, agentId, messageId } = command;
      return [{ type: 'WebappRepresented', data: { appId: state.appId, title, description, agentId, messageId } }];
    }
    case 'RetireWebapp':
      // Only a port ties up a process of its presenter; a static file or a link outlives the agent.
      return state.kind === 'port' && state.status === 'live'
        ? [{ type: 'WebappRetired', data: { appId: state.appId, reason: command.reason } }]
        : [];
    default: {
      const never: never = command;
      return never;
    }
  }
}

function present(app: WebappPresented['data'], state: Webapp): WebappEvent[] {
  if (state.status !== 'absent') throw new DomainError('ErrWebappExists', `web app ${app.appId} already exists`);
  if (!WEBAPP_ID.test(app.appId)) throw invalidInput('a web app id is 32 lowercase hex characters');
  if (!WEBAPP_KINDS.includes(app.kind)) throw invalidInput(`kind must be one of ${WEBAPP_KINDS.join(', ')}`);
  if (app.target.trim() === '') throw invalidInput('a web app needs a target');
  if (app.kind === 'port' && !validPort(app.target))
    throw invalidInput(`a port target is a number in ${MIN_APP_PORT}-${MAX_APP_PORT}`);
  return [{ type: 'WebappPresented', data: app }];
}

export const webappDecider: Decider<Webapp, WebappCommand, WebappEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
