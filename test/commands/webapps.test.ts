import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validPort, webappDecider } from '../../src/commands/webapps.js';
import { detectKind } from '../../src/actions/webapps/targets.js';
import { type WebappPresented, type WebappRepresented, type WebappRetired } from '../../src/events/webapps.js';
import { spec } from '../helpers/decider-spec.js';
import { detectedKind, storedTarget, type PresentationFacts } from '../../src/commands/webapp-presentation.js';

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
/** What webapp_present was accepted on for `port`: the recording commands are checked on it again. */
const portFacts: PresentationFacts = {
  target: '5173',
  kind: 'port',
  agentRef: '',
  callerAgentId: 3,
  presenter: { agentId: 3, name: 'worker', stopped: false, hostLoopback: true },
  project: { name: 'site', path: '/w/site', archived: false },
  staticFile: null,
  servedPort: 7070,
};

describe('the web app decider', () => {
  it('presents once, with a 32-hex id, a known kind, a target and, for a port, a valid port', () => {
    spec(webappDecider).given([]).when({ type: 'PresentWebapp', app: port.data, facts: portFacts }).then([port]);
    spec(webappDecider)
      .given([port])
      .when({ type: 'PresentWebapp', app: port.data, facts: portFacts })
      .thenThrows('ErrWebappExists');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, appId: 'abc' }, facts: portFacts })
      .thenThrows('ErrInvalidInput');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, target: '80' }, facts: portFacts })
      .thenThrows('ErrInvalidInput');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, target: ' ' }, facts: portFacts })
      .thenThrows('ErrInvalidInput');
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: { ...port.data, kind: 'ftp' as never }, facts: portFacts })
      .thenThrows('ErrInvalidInput');
  });

  it('records nothing the presentation rules refuse, even when the caller skipped CheckPresentation', () => {
    const stopped = { ...portFacts, presenter: { agentId: 3, name: 'worker', stopped: true, hostLoopback: true } };
    spec(webappDecider)
      .given([])
      .when({ type: 'PresentWebapp', app: port.data, facts: stopped })
      .thenThrows('ErrAgentStopped');
    spec(webappDecider)
      .given([port])
      .when({ type: 'RepresentWebapp', title: '', description: '', agentId: 3, messageId: 12, facts: stopped })
      .thenThrows('ErrAgentStopped');
  });

  it('an agent in a network of its own presents no port (ErrPortNotAllowed); the owner may, for it', () => {
    const confined = { ...portFacts, presenter: { ...portFacts.presenter!, hostLoopback: false } };
    const refused = spec(webappDecider)
      .given([])
      .when({ type: 'CheckPresentation', facts: { ...confined, target: '05432' } })
      .thenThrows('ErrPortNotAllowed', "^Error: agent worker runs in a network of its own .* this host's port 5432 ");
    assert.deepEqual(refused.details, { agent_id: 3, port: 5432 });
    spec(webappDecider)
      .given([port])
      .when({ type: 'RepresentWebapp', title: '', description: '', agentId: 3, messageId: 12, facts: confined })
      .thenThrows('ErrPortNotAllowed');
    spec(webappDecider)
      .given([])
      .when({ type: 'CheckPresentation', facts: { ...confined, callerAgentId: null, agentRef: 'worker' } })
      .thenNothingHappened();
    spec(webappDecider)
      .given([])
      .when({ type: 'CheckPresentation', facts: { ...confined, kind: '', target: 'https://example.com/' } })
      .thenNothingHappened();
  });

  it('re-presents an existing registration; an absent one cannot be', () => {
    const again = {
      type: 'RepresentWebapp' as const,
      title: '',
      description: 'new',
      agentId: 4,
      messageId: 11,
      facts: portFacts,
    };
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

describe('presenting a web app', () => {
  /**
   * webapp_present's rules in the web app decider (CheckPresentation), given/when/then: each refusal with
   * xylocopa's text in its order — target, kind, the presenting agent, its project, the target itself — and
   * an accepted presentation, which writes nothing by itself (the action then posts the card and records it).
   */
  const ROOT = '/w/site';
  const facts = (f: Partial<PresentationFacts> = {}): PresentationFacts => ({
    target: 'index.html',
    kind: '',
    agentRef: '',
    callerAgentId: 3,
    presenter: { agentId: 3, name: 'worker', stopped: false, hostLoopback: true },
    project: { name: 'site', path: ROOT, archived: false },
    staticFile: { root: ROOT, resolved: `${ROOT}/index.html`, entry: 'file' },
    servedPort: 7070,
    ...f,
  });
  const check = (f: Partial<PresentationFacts> = {}) =>
    spec(webappDecider)
      .given([])
      .when({ type: 'CheckPresentation', facts: facts(f) });

  describe('webapp_present (CheckPresentation): who presents, and where', () => {
    it('accepts a running agent with a project presenting a page inside it: nothing written yet', () => {
      check().thenNothingHappened();
      check({ agentRef: 'worker' }).thenNothingHappened();
      check({ agentRef: '3', callerAgentId: null }).thenNothingHappened();
    });

    it('checks the target, then the kind, before the agent', () => {
      check({ target: '   ', kind: 'iframe', presenter: null }).thenThrows(
        'ErrInvalidInput',
        '^Error: target is required\\.$',
      );
      check({ kind: 'iframe', presenter: null }).thenThrows(
        'ErrInvalidInput',
        "^Error: kind must be one of \\('static', 'port', 'url'\\)\\.$",
      );
    });

    it('an owner names the agent; an agent may name only itself', () => {
      check({ callerAgentId: null, presenter: null }).thenThrows(
        'ErrUnknownCaller',
        "^Error: could not identify the calling agent \\(this is an owner token, not an agent's\\)\\. Pass agent_id explicitly\\.$",
      );
      const missing = check({ agentRef: 'ghost', presenter: null, project: null }).thenThrows(
        'ErrNotFound',
        '^Error: agent ghost not found\\.$',
      );
      assert.deepEqual(missing.details, { agent_id: 'ghost' });
      const other = check({
        agentRef: 'loner',
        presenter: { agentId: 4, name: 'loner', stopped: true, hostLoopback: true },
        project: null,
      }).thenThrows('ErrForbidden', '^Error: agent_id names another agent — an agent presents web apps as itself\\.$');
      assert.deepEqual(other.details, { agent_id: 'loner' });
    });

    it('then a stopped agent, an agent without a project, an archived project — before the target', () => {
      const stopped = { agentId: 3, name: 'worker', stopped: true, hostLoopback: true };
      check({ presenter: stopped, project: null, staticFile: null }).thenThrows(
        'ErrAgentStopped',
        '^Error: agent worker is stopped — only a running agent presents web apps\\.$',
      );
      check({ project: null, staticFile: null }).thenThrows(
        'ErrNoProject',
        '^Error: agent worker has no project\\. Its owner assigns one first: colony agents runtime worker --project NAME\\.$',
      );
      check({ project: { name: 'old', path: '/w/old', archived: true }, staticFile: { root: null } }).thenThrows(
        'ErrProjectArchived',
        '^Error: project old is archived — project_create re-activates it\\.$',
      );
    });
  });

  describe('webapp_present (CheckPresentation): the target', () => {
    const file = (resolved: string, entry: 'missing' | 'directory' | 'file' | 'other' = 'file') => ({
      staticFile: { root: ROOT, resolved, entry },
    });

    it('a static page lies inside the real project directory, exists, and is an .html/.htm file', () => {
      check({ staticFile: { root: null } }).thenThrows(
        'ErrProjectPathMissing',
        `^Error: project site directory is missing or was replaced by a link \\(${ROOT}\\)\\.$`,
      );
      for (const resolved of ['/etc/x.html', '/w/site-other/x.html', '/w'])
        check({ target: '../x.html', ...file(resolved) }).thenThrows(
          'ErrPathOutsideRoots',
          `^Error: \\.\\./x\\.html is outside project site \\(${ROOT}\\) — static apps must live inside the project directory\\.$`,
        );
      check({ target: 'nope.html', ...file(`${ROOT}/nope.html`, 'missing') }).thenThrows(
        'ErrNotFound',
        '^Error: nope\\.html not found in project site\\. Create the file first\\.$',
      );
      check({ target: 'dir', ...file(`${ROOT}/dir`, 'directory') }).thenThrows(
        'ErrInvalidInput',
        '^Error: dir is a directory — present the \\.html file in it \\(e\\.g\\. dir/index\\.html\\)\\.$',
      );
      check({ target: 'notes.txt', ...file(`${ROOT}/notes.txt`) }).thenThrows(
        'ErrInvalidInput',
        'is not an .html file',
      );
      check({ target: 'fifo.html', ...file(`${ROOT}/fifo.html`, 'other') }).thenThrows(
        'ErrInvalidInput',
        'not an .html',
      );
      check({ target: 'sub/page.HTM', ...file(`${ROOT}/sub/page.HTM`) }).thenNothingHappened();
    });

    it("a port: digits, 1024-65535, never Colony's own", () => {
      const port = (target: string, kind = '') => check({ target, kind, staticFile: null });
      port('80').thenThrows('ErrInvalidInput', '^Error: port must be in 1024-65535\\.$');
      port('65536').thenThrows('ErrInvalidInput', '^Error: port must be in 1024-65535\\.$');
      port('vite', 'PORT').thenThrows(
        'ErrInvalidInput',
        '^Error: port must be a number in 1024-65535 \\(got "vite"\\)\\.$',
      );
      port('7070').thenThrows('ErrInvalidInput', "^Error: cannot proxy the orchestrator's own port\\.$");
      port('07070').thenThrows('ErrInvalidInput', 'own port');
      port('05173').thenNothingHappened();
    });

    it('a link: http(s) with a host only', () => {
      const url = (target: string) => check({ target, kind: 'url', staticFile: null });
      for (const bad of ['javascript:alert(1)', 'ftp://example.com/x', 'https://', 'http://exa mple.com'])
        url(bad).thenThrows('ErrInvalidInput', '^Error: url must be an http:// or https:// URL\\.$');
      url('https://example.com/report').thenNothingHappened();
    });
  });

  describe('kind detection and the stored target', () => {
    it('detects url, port or static when kind is empty; an explicit kind is lower-cased; anything else is none', () => {
      assert.equal(detectedKind('https://example.com', ''), 'url');
      assert.equal(detectedKind('5173', ''), 'port');
      assert.equal(detectedKind('index.html', ''), 'static');
      assert.equal(detectedKind('5173', ' Static '), 'static');
      assert.equal(detectedKind('x', 'iframe'), null);
    });

    it('stores a page relative to the project (a leading dot kept), a port without leading zeros, a link as given', () => {
      assert.equal(
        storedTarget('static', './index.html', { root: ROOT, resolved: `${ROOT}/index.html`, entry: 'file' }),
        'index.html',
      );
      assert.equal(
        storedTarget('static', '.hidden/x.html', { root: ROOT, resolved: `${ROOT}/.hidden/x.html`, entry: 'file' }),
        '.hidden/x.html',
      );
      assert.equal(storedTarget('port', '05173', null), '5173');
      assert.equal(storedTarget('url', 'https://example.com/', null), 'https://example.com/');
    });
  });
});
