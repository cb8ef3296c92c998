import { jsonLines, num, obj, stepLine, str, type JsonObject } from './jsonl.js';
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
 * Codex (`codex exec --json`). Codex reads no `.mcp.json`: Colony's server is given per run with `-c
 * mcp_servers.colony.*` (its URL, the token by the name of the variable that holds it, its tools approved —
 * exec mode never asks, and refuses a call that would need asking), and nothing of CODEX_HOME's config is
 * read (`--ignore-user-config`: the agent can write its home). Colony's sandbox confines it, so Codex's own
 * is off (`sandbox_mode="danger-full-access"`: it cannot nest inside Colony's). Its plugins, analytics and
 * built-in goal tools (named like Colony's) are off. An OPENAI_BASE_URL secret makes a provider of it. It
 * prints JSONL events: `thread.started` (its session), `item.completed` (agent messages, MCP tool calls; an
 * item of type `error` is a warning), `turn.completed` (tokens — no cost: a rate card prices it; the
 * thread's so far on a resumed thread), `turn.failed` / `error`.
 */
export const codex: RuntimeAdapter = {
  runtime: 'codex',
  label: 'Codex',
  needs: {
    binary: 'codex',
    binaryEnv: 'COLONY_CODEX_BIN',
    keySecrets: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    loginFiles: ['.codex/auth.json'],
    // With an API key; a ChatGPT login talks to chatgpt.com instead (docs/agents.md: Running real agents).
    hosts: () => ['api.openai.com'],
    install: 'npm install -g @openai/codex',
  },
  checkModel(model) {
    if (!MODEL_PATTERN.test(model) || model.includes('/'))
      return `Codex takes an OpenAI model name such as gpt-5-codex or o4-mini, not "${model}"`;
    return null;
  },
  launch(ctx: LaunchContext): LaunchPlan {
    const base = ctx.baseUrls.OPENAI_BASE_URL;
    const common = [
      '--json',
      '--skip-git-repo-check',
      // Its config is Colony's, given here: the agent can write its home, so nothing of it is read.
      '--ignore-user-config',
      ...(ctx.model ? ['--model', ctx.model] : []),
      // Nothing but the model endpoint (plugins: github.com, chatgpt.com; analytics), and no built-in
      // goal tools, whose names are Colony's (get_goal).
      '--disable',
      'plugins',
      '--disable',
      'goals',
      '-c',
      'analytics.enabled=false',
      '-c',
      `mcp_servers.colony.url=${JSON.stringify(ctx.mcpUrl)}`,
      '-c',
      'mcp_servers.colony.bearer_token_env_var="COLONY_TOKEN"',
      // exec never asks: without this every MCP call is refused "requires approval".
      '-c',
      'mcp_servers.colony.default_tools_approval_mode="approve"',
      '-c',
      'mcp_servers.colony.required=true',
      // Colony's sandbox confines it; Codex's own cannot nest inside it.
      '-c',
      'sandbox_mode="danger-full-access"',
      ...(base ? provider(base) : []),
    ];
    const args = ctx.resume ? ['exec', 'resume', ctx.resume, ...common, '-'] : ['exec', ...common, '-'];
    return { args, stdin: ctx.prompt, env: { CODEX_HOME: '$HOME/.codex' }, files: [], homeDirs: ['.codex'] };
  },
  meter: ({ resumed }) => codexMeter(resumed),
  report(out, ctx): RunReport {
    const lines = jsonLines(out.stdout);
    const completed = lines.filter((l) => l.type === 'item.completed').map((l) => obj(l.item));
    const answers = completed.filter((i) => i.type === 'agent_message').map((i) => str(i.text) ?? '');
    const calls = completed.filter((i) => i.type === 'mcp_tool_call');
    const colonyCalls = calls.filter((i) => i.server === 'colony' && i.status !== 'failed' && !i.error).length;
    const usage = lines.filter((l) => l.type === 'turn.completed').map((l) => obj(l.usage));
    const cached = sum(usage, 'cached_input_tokens');
    const failed = lines.find((l) => l.type === 'turn.failed' || l.type === 'error') ?? null;
    const report: RunReport = {
      answer: answers.length > 0 ? answers[answers.length - 1]! : null,
      steps: calls.map((i) =>
        stepLine(
          `${String(i.server)}.${String(i.tool)}`,
          i.arguments,
          i.error || i.status === 'failed' ? 'error' : 'ok',
        ),
      ),
      tokensIn: sum(usage, 'input_tokens'),
      tokensOut: sum(usage, 'output_tokens'),
      cachedIn: cached,
      costUsd: null,
      lane: ctx.lane,
      cliSession: str(lines.find((l) => l.type === 'thread.started')?.thread_id),
      // A resumed thread's turn.completed counts the whole thread.
      cumulative: ctx.resumed,
      colonyCalls,
      failure: null,
    };
    report.failure = failureOf('Codex', {
      ended: usage.length > 0 || failed !== null,
      exitCode: out.exitCode,
      tail: out.tail,
      isError: failed !== null,
      errorText: failed ? errorText(failed) : '',
      denied: [],
      mcpDown: null,
      colonyCalls,
      ctx,
    });
    return report;
  },
};

/** An OpenAI-compatible endpoint the owner named (OPENAI_BASE_URL): a provider of Colony's, over the Responses API. */
const provider = (url: string): string[] => [
  '-c',
  'model_provider="colony"',
  '-c',
  'model_providers.colony.name="colony"',
  '-c',
  `model_providers.colony.base_url=${JSON.stringify(url.replace(/\/+$/, '').replace(/(\/v1)?$/, '/v1'))}`,
  '-c',
  'model_providers.colony.env_key="OPENAI_API_KEY"',
  '-c',
  'model_providers.colony.wire_api="responses"',
];

/** Tokens as turns complete (no cost: a rate card prices them); on a resumed thread each turn counts the thread's so far. */
function codexMeter(resumed: boolean): UsageMeter {
  const turns: JsonObject[] = [];
  let thread: string | null = null;
  return {
    line(l) {
      if (l.type === 'thread.started') thread = str(l.thread_id);
      else if (l.type === 'turn.completed') turns.push(obj(l.usage));
    },
    usage() {
      const counted = resumed ? turns.slice(-1) : turns;
      return {
        tokensIn: sum(counted, 'input_tokens'),
        tokensOut: sum(counted, 'output_tokens'),
        cachedIn: sum(counted, 'cached_input_tokens'),
        costUsd: null,
        ...(resumed ? { cumulative: { cliSession: thread } } : {}),
      };
    },
  };
}

const sum = (usage: JsonObject[], key: string): number => usage.reduce((n, u) => n + num(u[key]), 0);
const errorText = (l: JsonObject): string => str(l.message) ?? str(obj(l.error).message) ?? JSON.stringify(l);
