import { jsonLines, num, obj, stepLine, str, usd, type JsonObject } from './jsonl.js';
import {
  MODEL_PATTERN,
  type LaunchContext,
  type LaunchPlan,
  type ReportContext,
  type RunReport,
  type UsageMeter,
  type UsageSoFar,
} from './types.js';
import type { RuntimeAdapter } from './types.js';
import { failureOf, mcpConfig } from './outcome.js';

/**
 * Claude Code (`claude -p`), headless. The launch line locks it down to what Colony approved: only the
 * per-run MCP config (`--strict-mcp-config`), no settings from the host or the project
 * (`--setting-sources ''`), exactly the agent's Colony tools pre-approved (`--allowedTools`) and no
 * built-in tool at all (`--tools ''`: the agent works through Colony; a built-in it tried would be a
 * permission denial), the run's remaining budget as `--max-budget-usd`. It prints stream-json: an
 * `init` line (its session, its MCP servers' status, where its key came from), the assistant's
 * messages with their tool calls, and one `result` line with cost, usage and the permission denials —
 * which Claude Code reports with exit code 0, so the outcome is read from the result, not the exit.
 */
const PREFIX = 'mcp__colony__';

export const claudeCode: RuntimeAdapter = {
  runtime: 'claude-code',
  label: 'Claude Code',
  needs: {
    binary: 'claude',
    binaryEnv: 'COLONY_CLAUDE_BIN',
    keySecrets: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
    loginFiles: ['.claude/.credentials.json'],
    hosts: () => ['api.anthropic.com'],
    install:
      'npm install -g @anthropic-ai/claude-code (or the native installer: curl -fsSL https://claude.ai/install.sh | bash)',
  },
  checkModel(model) {
    if (!MODEL_PATTERN.test(model)) return `"${model}" is not a model name`;
    if (/^(sonnet|opus|haiku|opusplan|default)(\[1m\])?$/.test(model) || /^claude-[a-z0-9.-]+(\[1m\])?$/.test(model))
      return null;
    return `Claude Code takes a Claude model: an alias (sonnet, opus, haiku) or a full name such as claude-sonnet-4-5, not "${model}"`;
  },
  launch(ctx: LaunchContext): LaunchPlan {
    const allowed = ctx.toolScope.map((t) => `${PREFIX}${t}`).join(',');
    return {
      args: [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        ...(ctx.model ? ['--model', ctx.model] : []),
        '--strict-mcp-config',
        '--mcp-config',
        { env: 'COLONY_MCP_CONFIG' },
        '--setting-sources',
        '',
        '--tools',
        '',
        '--allowedTools',
        allowed,
        ...(ctx.budgetUsd !== null ? ['--max-budget-usd', ctx.budgetUsd.toFixed(2)] : []),
        ...(ctx.resume ? ['--resume', ctx.resume] : []),
      ],
      stdin: ctx.prompt,
      env: {
        // Nothing but the model endpoint: no auto-update, telemetry, error reporting or feedback survey.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        // MCP tools in the tool list itself, not deferred behind a tool search.
        ENABLE_TOOL_SEARCH: 'false',
      },
      files: [{ env: 'COLONY_MCP_CONFIG', content: mcpConfig(ctx) }],
    };
  },
  meter: () => claudeMeter(),
  report(out, ctx: ReportContext): RunReport {
    const lines = jsonLines(out.stdout);
    const init = lines.find((l) => l.type === 'system' && l.subtype === 'init') ?? {};
    const result = [...lines].reverse().find((l) => l.type === 'result') ?? null;
    const { steps, colonyCalls } = toolCalls(lines);
    const usage = obj(result?.usage);
    const cached = num(usage.cache_read_input_tokens);
    const report: RunReport = {
      answer: str(result?.result),
      steps,
      tokensIn: num(usage.input_tokens) + num(usage.cache_creation_input_tokens) + cached,
      tokensOut: num(usage.output_tokens),
      cachedIn: cached,
      // On a resumed session total_cost_usd is the session's; what this process spent is model_usage_since_last_result.
      costUsd: sinceLast(result) ?? usd(result?.total_cost_usd),
      lane: laneOf(str(init.apiKeySource), ctx),
      cliSession: str(result?.session_id) ?? str(init.session_id),
      colonyCalls,
      failure: null,
    };
    report.failure = failureOf('Claude Code', {
      ended: result !== null,
      exitCode: out.exitCode,
      tail: out.tail,
      isError: result?.is_error === true || (typeof result?.subtype === 'string' && result.subtype !== 'success'),
      errorText: str(result?.result) ?? str(result?.subtype) ?? '',
      denied: denials(result),
      mcpDown: mcpDown(init),
      colonyCalls,
      ctx,
    });
    return report;
  },
};

/**
 * Usage as it streams: each assistant message carries its turn's usage (repeated on every content block of
 * the message, so the last line of a message id counts); the result line, when it comes, has the totals.
 */
function claudeMeter(): UsageMeter {
  const turns = new Map<string, JsonObject>();
  let final: UsageSoFar | null = null;
  return {
    line(l) {
      if (l.type === 'assistant') {
        const m = obj(l.message);
        if (m.usage) turns.set(str(m.id) ?? String(turns.size), obj(m.usage));
      } else if (l.type === 'result') {
        const u = obj(l.usage);
        const cached = num(u.cache_read_input_tokens);
        final = {
          tokensIn: num(u.input_tokens) + num(u.cache_creation_input_tokens) + cached,
          tokensOut: num(u.output_tokens),
          cachedIn: cached,
          costUsd: sinceLast(l) ?? usd(l.total_cost_usd),
        };
      }
    },
    usage() {
      if (final) return final;
      const all = [...turns.values()];
      const cached = all.reduce((n, u) => n + num(u.cache_read_input_tokens), 0);
      return {
        tokensIn: all.reduce((n, u) => n + num(u.input_tokens) + num(u.cache_creation_input_tokens), 0) + cached,
        tokensOut: all.reduce((n, u) => n + num(u.output_tokens), 0),
        cachedIn: cached,
        costUsd: null,
      };
    },
  };
}

function sinceLast(result: JsonObject | null): number | null {
  const models = Object.values(obj(result?.model_usage_since_last_result)).map((m) => usd(obj(m).costUSD));
  return models.length > 0 && models.every((c) => c !== null) ? models.reduce<number>((a, c) => a + c!, 0) : null;
}

/** Its tool calls as steps, each with its result's outcome (the tool_result in the next user message). */
function toolCalls(lines: JsonObject[]): { steps: string[]; colonyCalls: number } {
  const results = new Map<string, boolean>();
  for (const l of lines)
    if (l.type === 'user')
      for (const c of contentOf(l))
        if (c.type === 'tool_result') results.set(String(c.tool_use_id), c.is_error === true);
  const steps: string[] = [];
  let colonyCalls = 0;
  for (const l of lines)
    if (l.type === 'assistant')
      for (const c of contentOf(l)) {
        if (c.type !== 'tool_use') continue;
        const name = String(c.name);
        const failed = results.get(String(c.id));
        if (name.startsWith(PREFIX) && failed === false) colonyCalls++;
        const tool = name.startsWith(PREFIX) ? `colony.${name.slice(PREFIX.length)}` : name;
        steps.push(stepLine(tool, c.input, failed === undefined ? 'no result' : failed ? 'error' : 'ok'));
      }
  return { steps, colonyCalls };
}

const contentOf = (l: JsonObject): JsonObject[] => {
  const c = obj(l.message).content;
  return Array.isArray(c) ? c.map(obj) : [];
};

function denials(result: JsonObject | null): string[] {
  const d = result?.permission_denials;
  return Array.isArray(d) ? d.map((x) => str(obj(x).tool_name) ?? '?') : [];
}

function mcpDown(init: JsonObject): string | null {
  const servers = Array.isArray(init.mcp_servers) ? init.mcp_servers.map(obj) : [];
  const colony = servers.find((s) => s.name === 'colony');
  return colony && colony.status !== 'connected' ? `Colony's MCP server is ${String(colony.status)} for it` : null;
}

/** `apiKeySource` says where its key came from: a key or key helper is metered; `none` is a claude.ai login. */
function laneOf(source: string | null, ctx: ReportContext): RunReport['lane'] {
  if (source === null) return ctx.lane;
  if (source === 'none') return ctx.lane === 'api' ? 'api' : 'subscription';
  return 'api';
}
