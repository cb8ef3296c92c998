import { jsonLines, num, obj, stepLine, str, usd, type JsonObject } from './jsonl.js';
import { failureOf } from './outcome.js';
import {
  MODEL_PATTERN,
  type LaunchContext,
  type LaunchPlan,
  type RunReport,
  type RuntimeAdapter,
  type UsageMeter,
} from './types.js';

/**
 * OpenCode (`opencode run --format json`). Its config for the run is a file of Colony's (OPENCODE_CONFIG),
 * and nothing else is read: XDG_CONFIG_HOME is a read-only empty directory and the project's config, skills
 * and plugins are off, so neither the host's config nor one the agent wrote (its home and workspace are its
 * own) leaks in. Colony's MCP server is a remote server
 * whose header names the token by its variable (`{env:COLONY_TOKEN}`: never on disk); every tool is denied
 * but exactly the agent's Colony tools (`colony_<tool>`), which are allowed without a prompt (nothing would
 * answer one). No model-list fetch, auto-update, LSP download or sharing. A provider's base URL set as a
 * secret (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) is its provider's baseURL. The model is `provider/model`.
 * It prints JSON events — `text`, `tool_use` (with its state), `step_finish` (tokens and cost), `error` —
 * each with the session's id.
 */
export const opencode: RuntimeAdapter = {
  runtime: 'opencode',
  label: 'OpenCode',
  // Its global config dir: read-only, with only the .gitignore it would write (a missing dir, or a file it
  // cannot write, makes it crash at start).
  fixedConfig: [
    {
      env: 'XDG_CONFIG_HOME',
      files: { 'opencode/.gitignore': 'node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore' },
    },
  ],
  needs: {
    binary: 'opencode',
    binaryEnv: 'COLONY_OPENCODE_BIN',
    keySecrets: [
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
      'OPENROUTER_API_KEY',
      'GEMINI_API_KEY',
      'GOOGLE_GENERATIVE_AI_API_KEY',
    ],
    loginFiles: ['.local/share/opencode/auth.json'],
    hosts: (model) => PROVIDER_HOSTS[model.split('/')[0] ?? ''] ?? [],
    install: 'npm install -g opencode-ai',
  },
  checkModel(model) {
    if (!MODEL_PATTERN.test(model) || !/^[a-z0-9-]+\/[^/].*$/i.test(model))
      return `OpenCode takes provider/model, such as anthropic/claude-sonnet-4-5 or openai/gpt-5, not "${model}"`;
    return null;
  },
  launch(ctx: LaunchContext): LaunchPlan {
    const config = {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      mcp: {
        colony: {
          type: 'remote',
          url: ctx.mcpUrl,
          headers: { Authorization: 'Bearer {env:COLONY_TOKEN}' },
          oauth: false,
          enabled: true,
        },
      },
      permission: Object.fromEntries([['*', 'deny'], ...ctx.toolScope.map((t) => [`colony_${t}`, 'allow'])]),
      ...providers(ctx.baseUrls),
    };
    return {
      args: [
        'run',
        '--format',
        'json',
        ...(ctx.model ? ['--model', ctx.model] : []),
        ...(ctx.resume ? ['--session', ctx.resume] : []),
      ],
      stdin: ctx.prompt,
      env: {
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        // Nothing of the agent's own workspace or home: no project config, skills or plugins it could write.
        OPENCODE_DISABLE_PROJECT_CONFIG: '1',
        OPENCODE_DISABLE_CLAUDE_CODE: '1',
        OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
        OPENCODE_PURE: '1',
      },
      files: [{ env: 'OPENCODE_CONFIG', content: `${JSON.stringify(config, null, 2)}\n` }],
    };
  },
  meter: () => openCodeMeter(),
  report(out, ctx): RunReport {
    const lines = jsonLines(out.stdout);
    const parts = (type: string): JsonObject[] => lines.filter((l) => l.type === type).map((l) => obj(l.part));
    const tools = parts('tool_use');
    const colony = tools.filter((p) => String(p.tool).startsWith('colony_'));
    const colonyCalls = colony.filter((p) => obj(p.state).status === 'completed').length;
    const steps = parts('step_finish');
    const tokens = steps.map((p) => obj(p.tokens));
    const cached = tokens.reduce((n, t) => n + num(obj(t.cache).read), 0);
    const costs = steps.map((p) => usd(p.cost));
    const cost = costs.reduce<number>((n, c) => n + (c ?? 0), 0);
    const error = lines.find((l) => l.type === 'error') ?? null;
    const text = parts('text').map((p) => str(p.text) ?? '');
    const report: RunReport = {
      answer: text.length > 0 ? text[text.length - 1]! : null,
      steps: tools.map((p) =>
        stepLine(
          String(p.tool).replace(/^colony_/, 'colony.'),
          obj(p.state).input,
          obj(p.state).status === 'completed' ? 'ok' : String(obj(p.state).status),
        ),
      ),
      tokensIn: tokens.reduce((n, t) => n + num(t.input) + num(obj(t.cache).write), 0) + cached,
      tokensOut: tokens.reduce((n, t) => n + num(t.output) + num(t.reasoning), 0),
      cachedIn: cached,
      // OpenCode prices from its model list: 0 for a model it has no price for, which is not a price.
      costUsd: cost > 0 ? cost : null,
      lane: ctx.lane,
      cliSession: str(lines.find((l) => typeof l.sessionID === 'string')?.sessionID),
      colonyCalls,
      failure: null,
    };
    report.failure = failureOf('OpenCode', {
      ended: steps.length > 0 || error !== null,
      exitCode: out.exitCode,
      tail: out.tail,
      isError: error !== null,
      errorText: error ? (str(obj(obj(error.error).data).message) ?? str(obj(error.error).name) ?? '') : '',
      denied: tools
        .filter((p) => /denied|not allowed|permission/i.test(String(obj(p.state).error ?? '')))
        .map((p) => String(p.tool)),
      mcpDown: null,
      colonyCalls,
      ctx,
    });
    return report;
  },
};

/** Tokens and cost as each step finishes (a cost of 0 is a model it has no price for: not a price). */
function openCodeMeter(): UsageMeter {
  let tokensIn = 0;
  let tokensOut = 0;
  let cachedIn = 0;
  let cost = 0;
  return {
    line(l) {
      if (l.type !== 'step_finish') return;
      const p = obj(l.part);
      const t = obj(p.tokens);
      const cached = num(obj(t.cache).read);
      tokensIn += num(t.input) + num(obj(t.cache).write) + cached;
      tokensOut += num(t.output) + num(t.reasoning);
      cachedIn += cached;
      cost += usd(p.cost) ?? 0;
    },
    usage: () => ({ tokensIn, tokensOut, cachedIn, costUsd: cost > 0 ? cost : null }),
  };
}

const PROVIDER_HOSTS: Record<string, string[]> = {
  anthropic: ['api.anthropic.com'],
  openai: ['api.openai.com'],
  openrouter: ['openrouter.ai'],
  google: ['generativelanguage.googleapis.com'],
};

/** The providers whose base URL the owner set as a secret: a gateway, a proxy, a local endpoint. */
function providers(baseUrls: Readonly<Record<string, string>>): { provider?: Record<string, unknown> } {
  const provider: Record<string, unknown> = {};
  const v1 = (url: string) => url.replace(/\/+$/, '').replace(/(\/v1)?$/, '/v1');
  if (baseUrls.ANTHROPIC_BASE_URL) provider.anthropic = { options: { baseURL: v1(baseUrls.ANTHROPIC_BASE_URL) } };
  if (baseUrls.OPENAI_BASE_URL) provider.openai = { options: { baseURL: v1(baseUrls.OPENAI_BASE_URL) } };
  return Object.keys(provider).length > 0 ? { provider } : {};
}
