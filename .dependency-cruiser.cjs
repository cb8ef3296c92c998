/**
 * The layer rules (CONTRIBUTING.md, "Layers"), checked by `npm run lint:deps` inside `npm test`.
 * From the bottom up: the shared base (src/*.ts but app.ts and cli.ts) → engine → events → projections and
 * commands → actions → runtime, evidence, report → mcp → http → cli, demo. A file may import its own layer
 * and the layers below it, never one above, and no import may close a circle.
 */
const DOMAIN =
  'src/(events|commands|projections|actions|runtime|evidence|report|mcp|http|cli|demo)/|src/(app|cli|config)[.]ts$';
const above = (...layers) => `src/(${layers.join('|')})/|src/cli[.]ts$`;
const APP = 'src/(app|config)[.]ts$';
const BASE = 'src/[^/]+[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other cannot be understood, tested or moved apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'base-imports-nothing-above',
      severity: 'error',
      comment: 'The shared base (errors, clock, ids, tokens…) is below the engine.',
      from: { path: BASE, pathNot: 'src/(app|cli|config|primary-worker)[.]ts$' },
      to: { path: `src/engine/|${DOMAIN}|${APP}` },
    },
    {
      name: 'engine-imports-no-domain',
      severity: 'error',
      comment: 'The engine (log, chain, commands, projections runner) knows no domain: the next store plugs in there.',
      from: { path: '^src/engine/' },
      to: { path: DOMAIN },
    },
    {
      name: 'events-import-no-layer',
      severity: 'error',
      comment: 'Event types and pure domain facts sit under every layer but the engine.',
      from: { path: '^src/events/' },
      to: {
        path:
          above('commands', 'projections', 'actions', 'runtime', 'evidence', 'report', 'mcp', 'http', 'cli', 'demo') +
          '|' +
          APP,
      },
    },
    {
      name: 'commands-import-events-and-engine',
      severity: 'error',
      comment: 'Deciders are pure: the facts they need come in the command, looked up by the action.',
      from: { path: '^src/commands/' },
      to: {
        path:
          above('projections', 'actions', 'runtime', 'evidence', 'report', 'mcp', 'http', 'cli', 'demo') + '|' + APP,
      },
    },
    {
      name: 'projections-stay-below-actions',
      severity: 'error',
      comment: 'Read models fold events; they never run commands or know a transport.',
      from: { path: '^src/projections/' },
      to: {
        path: above('commands', 'actions', 'runtime', 'evidence', 'report', 'mcp', 'http', 'cli', 'demo') + '|' + APP,
      },
    },
    {
      name: 'actions-below-transports',
      severity: 'error',
      comment: 'Actions gather facts and route commands for every transport; none of them imports one.',
      from: { path: '^src/actions/' },
      to: { path: above('runtime', 'evidence', 'report', 'mcp', 'http', 'cli', 'demo') },
    },
    {
      name: 'services-below-mcp',
      severity: 'error',
      comment: 'Runtime, evidence and report serve MCP, HTTP and the CLI alike.',
      from: { path: '^src/(runtime|evidence|report)/' },
      to: { path: above('mcp', 'http', 'cli', 'demo') },
    },
    {
      name: 'mcp-below-http',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: above('http', 'cli', 'demo') },
    },
    { name: 'http-below-cli', severity: 'error', from: { path: '^src/http/' }, to: { path: above('cli', 'demo') } },
    {
      name: 'app-is-the-composition-root',
      severity: 'error',
      comment: 'app.ts wires the engine and the projections; everything above may use it.',
      from: { path: APP },
      to: { path: above('commands', 'actions', 'runtime', 'evidence', 'report', 'mcp', 'http', 'cli', 'demo') },
    },
    {
      name: 'test-helpers-stay-in-test',
      severity: 'error',
      comment: 'Shipped code and benchmarks never depend on test code.',
      from: { path: '^(src|bench|testkit|examples)/' },
      to: { path: '^test/' },
    },
    {
      name: 'src-ships-alone',
      severity: 'error',
      comment: 'What tests and benchmarks share lives in testkit/; src/ never needs it.',
      from: { path: '^src/', pathNot: '^src/(cli/bench[.]ts|demo/)' },
      to: { path: '^(testkit|bench|examples)/' },
    },
    { name: 'no-unresolvable', severity: 'error', from: {}, to: { couldNotResolve: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|web/dist)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
  },
};
