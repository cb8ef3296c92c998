import { jsonLines, num, obj, stepLine, str, type JsonObject } from './jsonl.js';
import { failureOf } from './outcome.js';
import { MODEL_PATTERN, type LaunchContext, type LaunchPlan, type RunReport, type RuntimeAdapter } from './types.js';

/**
 * Codex (`codex exec --json`). Codex reads no `.mcp.json`: Colony's server is given per run with `-c
 * mcp_servers.colony.*` (its URL, the token by the name of the variable that holds it, exactly the
 * agent's tools), and nothing of the host's config is read (`--ignore-user-config` is not needed: its
 * CODEX_HOME is the agent's private home). Colony's sandbox confines it, so Codex's own is off
 * (`--sandbox danger-full-access`, approvals `never`: nothing would answer a prompt). The workspace need not be
 * a git repository (`--skip-git-repo-check`). It prints JSONL events: `thread.started` (its session),
 * `item.completed` (agent messages, MCP tool calls), `turn.completed` (token usage — no cost: a rate card
 * prices it), `turn.failed` / `error`.
 */
export const codex: RuntimeAdapter = {
  runtime: 'codex',
  label: 'Codex',
  needs: {
    binary: 'codex',
    binaryEnv: 'COLONY_CODEX_BIN',
    keySecrets: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    loginFiles: ['.codex/auth.json'],
    hosts: () => ['api.openai.com', 'chatgpt.com'],
    install: 'npm install -g @openai/codex',
  },
  checkModel(model) {
    if (!MODEL_PATTERN.test(model) || model.includes('/'))
      return `Codex takes an OpenAI model name such as gpt-5-codex or o4-mini, not "${model}"`;
    return null;
  },
  launch(ctx: LaunchContext): LaunchPlan {
    const common = [
      '--json',
      '--skip-git-repo-check',
      ...(ctx.model ? ['--model', ctx.model] : []),
      '-c',
      'approval_policy="never"',
      '-c',
      `mcp_servers.colony.url=${JSON.stringify(ctx.mcpUrl)}`,
      '-c',
      'mcp_servers.colony.bearer_token_env_var="COLONY_TOKEN"',
      '-c',
      `mcp_servers.colony.enabled_tools=${JSON.stringify([...ctx.toolScope])}`,
      '-c',
      'mcp_servers.colony.required=true',
    ];
    const args = ctx.resume
      ? ['exec', ...common, 'resume', ctx.resume, '-']
      : ['exec', ...common, '--sandbox', 'danger-full-access', '-'];
    return { args, stdin: ctx.prompt, env: {}, files: [] };
  },
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

const sum = (usage: JsonObject[], key: string): number => usage.reduce((n, u) => n + num(u[key]), 0);
const errorText = (l: JsonObject): string => str(l.message) ?? str(obj(l.error).message) ?? JSON.stringify(l);
