import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validPort, webappDecider } from '../../src/commands/webapps.js';
import { detectKind } from '../../src/actions/webapps/targets.js';
import type { WebappPresented, WebappRepresented, WebappRetired } from '../../src/events/webapps.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The web app decider given/when/then (present once, re-present any number of times, a port app
 * retires when its presenter stops and revives when presented again) and xylocopa's kind detection.
 */
const APP = '0123456789abcdef0123456789abcdef';
const presented = (kind: 'static' | 'port' | 'url', target: string): WebappPresented => ({
  type: 'WebappPresented',
  data: {
    appId: APP,
    n: 1,
    ownerId: 1,
    projectId: 2,
    kind,
    target,
    title: 'Demo',
    description: '',
    agentId: 3,
    messageId: 10,
  },
});
const represented: WebappRepresented = {
  type: 'WebappRepresented',
  data: { appId: APP, title: '', description: 'new', agentId: 4, messageId: 11 },
};
const retired: WebappRetired = { type: 'WebappRetired', data: { appId: APP, reason: 'agent_stopped' } };
const port = presented('port', '5173');

describe('the web app decider', () => {
  it('presents once, with a 32-hex id, a known kind, a target and, for a port, a valid port', () => {
    spec(webappDecider).given([]).when({ type: 'PresentWebapp', app: port.data }).then([port]);
    spec(webappDecider).given([port]).when({ type: 'PresentWebapp', app: port.data }).thenThrows('ErrWebappExists');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, appId: 'abc' } })
      .thenThrows('ErrInvalidInput');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, target: '80' } })
      .thenThrows('ErrInvalidInput');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, target: ' ' } })
      .thenThrows('ErrInvalidInput');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, kind: 'ftp' as never } })
      .thenThrows('ErrInvalidInput');
  });

  it('re-presents an existing registration; an absent one cannot be', () => {
    const again = { type: 'RepresentWebapp' as const, title: '', description: 'new', agentId: 4, messageId: 11 };
    spec(webappDecider).given([port]).when(again).then([represented]);
    spec(webappDecider).given([]).when(again).thenThrows('ErrNotFound');
  });

  it('retires a live port app once; a retired one, a static app and a link stay as they are', () => {
    const retire = { type: 'RetireWebapp' as const, reason: 'agent_stopped' as const };
    spec(webappDecider).given([port]).when(retire).then([retired]);
    spec(webappDecider).given([port, retired]).when(retire).thenNothingHappened();
    spec(webappDecider)
      .given([presented('static', 'index.html')])
      .when(retire)
      .thenNothingHappened();
    spec(webappDecider)
      .given([presented('url', 'https://example.com/')])
      .when(retire)
      .thenNothingHappened();
  });

  it('a re-presented port app is live again, and retires again when its new presenter stops', () => {
    spec(webappDecider)
      .given([port, retired, represented])
      .when({ type: 'RetireWebapp', reason: 'agent_stopped' })
      .then([retired]);
  });

  it('validPort: digits without a leading zero, 1024-65535', () => {
    for (const ok of ['1024', '5173', '65535']) assert.equal(validPort(ok), true, ok);
    for (const bad of ['1023', '65536', '08080', '', '80a', '-1']) assert.equal(validPort(bad), false, bad);
  });
});

describe('detectKind (xylocopa)', () => {
  it('detects url for ^https?://, port for digits, static for anything else', () => {
    assert.equal(detectKind('https://example.com/x', ''), 'url');
    assert.equal(detectKind('http://localhost:3000', ''), 'url');
    assert.equal(detectKind('HTTPS://EXAMPLE.COM', ''), 'url', 'a URL scheme is case-insensitive');
    assert.equal(detectKind('5173', ''), 'port');
    assert.equal(detectKind('index.html', ''), 'static');
    assert.equal(detectKind('ftp://example.com', ''), 'static');
    assert.equal(detectKind('5173.html', ''), 'static');
  });
  it('lower-cases an explicit kind and refuses one outside the set', () => {
    assert.equal(detectKind('5173', 'STATIC'), 'static');
    assert.equal(detectKind('index.html', ' Port '), 'port');
    assert.throws(() => detectKind('x', 'iframe'), {
      code: 'ErrInvalidInput',
      message: "Error: kind must be one of ('static', 'port', 'url').",
    });
  });
});
